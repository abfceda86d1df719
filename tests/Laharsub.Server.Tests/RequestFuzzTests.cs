using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Xunit.Abstractions;

namespace Laharsub.Server.Tests;

/// <summary>
/// Seeded fuzzing over raw sockets: mutated body framing (chunked and Content-Length) and mutated poll
/// and paging query strings. Every request must get a status line, never a 5xx, and never an error in
/// the log. Case N is built from <c>new Random(Seed + N)</c>, so a failure names the case that reproduces it.
/// </summary>
public sealed class RequestFuzzTests(ITestOutputHelper output) : IAsyncLifetime
{
    private const int Seed = 20261123;
    private const int CasesPerRun = 1500;
    private const int Concurrency = 32;

    private readonly LogRecorder _logs = new();
    private LaharsubTestServer _server = null!;
    private long _topic;

    public async Task InitializeAsync()
    {
        _server = await LaharsubTestServer.StartAsync(
            o =>
            {
                o.MaxMessageBytes = 1024;
                o.MaxSubscriptionsPerPoll = 8;
                // A valid poll that the fuzzer stumbles on waits at most a second.
                o.DefaultPollTimeout = TimeSpan.FromSeconds(1);
                o.MaxPollTimeout = TimeSpan.FromSeconds(1);
            },
            services: s =>
            {
                s.AddSingleton<ILoggerProvider>(_logs);
                // A body cut short is answered 408 after ~2 s instead of Kestrel's default 5 s.
                s.Configure<KestrelServerOptions>(kestrel => kestrel.Limits.MinRequestBodyDataRate = MalformedBodyTests.QuickBodyDataRate);
            });
        using var client = _server.CreateClient();
        _topic = await client.CreateTopicAsync();
        await client.CreateTopicAsync();
        await client.PublishTextAsync(_topic, "retained");
    }

    public async Task DisposeAsync()
    {
        await _server.DisposeAsync();
        _logs.Dispose();
    }

    [Fact]
    public Task MutatedBodyFramingNeverGets5xxOrADroppedConnection() =>
        RunAsync(BodyCase, allowed: [200, 201, 204, 400, 404, 408, 411, 413, 501]);

    [Fact]
    public Task MutatedQueryStringsNeverGet5xxOrADroppedConnection() =>
        RunAsync(QueryCase, allowed: [200, 204, 400, 404, 406, 414]);

    private async Task RunAsync(Func<Random, byte[]> makeCase, int[] allowed)
    {
        var failures = new ConcurrentQueue<string>();
        var statuses = new ConcurrentDictionary<int, int>();
        var clock = Stopwatch.StartNew();
        using var run = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await Parallel.ForAsync(0, CasesPerRun, new ParallelOptions { MaxDegreeOfParallelism = Concurrency, CancellationToken = run.Token }, async (index, cancellationToken) =>
        {
            var request = makeCase(new Random(Seed + index));
            using var bound = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            bound.CancelAfter(TimeSpan.FromSeconds(15));
            RawResponse? response;
            try
            {
                response = await RawHttp.ExchangeAsync(_server.BaseAddress, request, bound.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                failures.Enqueue($"case {index}: no answer within 15 s: {RawHttp.Printable(request)}");
                return;
            }
            if (response is null)
            {
                failures.Enqueue($"case {index}: connection closed without a status line: {RawHttp.Printable(request)}");
                return;
            }
            statuses.AddOrUpdate(response.Status, 1, (_, count) => count + 1);
            if (!allowed.Contains(response.Status))
            {
                failures.Enqueue($"case {index}: {response.Status} {response.BodyText}: {RawHttp.Printable(request)}");
            }
            else if (response.Status >= 400 && response.Body.Length > 0 && response.Header("Content-Type") != "application/problem+json")
            {
                failures.Enqueue($"case {index}: {response.Status} without a problem detail ({response.Header("Content-Type")}): {RawHttp.Printable(request)}");
            }
        });
        output.WriteLine($"{CasesPerRun} cases in {clock.Elapsed.TotalSeconds:0.0} s; statuses: {string.Join(", ", statuses.OrderBy(s => s.Key).Select(s => $"{s.Key}×{s.Value}"))}");

        Assert.True(failures.IsEmpty, $"{failures.Count} of {CasesPerRun} cases failed (seed {Seed}):\n{string.Join("\n", failures.Take(20))}");
        Assert.DoesNotContain(_logs.Entries, entry => entry.Level >= LogLevel.Error);
        Assert.DoesNotContain(_logs.Entries, entry => entry.Exception is not null);
        using var client = _server.CreateClient();
        Assert.Equal(System.Net.HttpStatusCode.OK, (await client.GetAsync(new Uri(_server.BaseAddress, "health")).WaitAsync(WireClient.Bound)).StatusCode);
    }

    private static readonly string[] ChunkSizeJunk =
        ["ZZ", "-1", "+1", " 1", "0x1", "1.0", "", "FFFFFFFFFFFFFFFFFF", "80000000", "7fffffff", "100000", "00000000000000000001", "g", "1\x00", "\u00e9"];

    private static readonly string[] LengthJunk =
        ["abc", "-1", "+3", "3.0", " 3 ", "0x3", "99999999999999999999", "3, 3", "3,4", "", "2147483648", "9223372036854775807", "\u0663"];

    private byte[] BodyCase(Random random)
    {
        var data = RandomText(random, random.Next(1, 40));
        var target = random.Next(10) switch
        {
            < 7 => $"POST /ps/topics/{_topic}",
            7 => "POST /ps/topics",
            8 => $"GET /ps/subscriptions?topics={_topic}:1&timeout=0",
            _ => "DELETE /ps/topics/999999",
        };
        var headers = new List<string> { "Host: fuzz", "Content-Type: text/plain", "Connection: close" };
        string body;
        if (random.Next(2) == 0)
        {
            headers.Add("Transfer-Encoding: " + Pick(random, ["chunked", "chunked", "chunked", "Chunked", "gzip, chunked", "chunked, chunked", "identity", "chunked;x=1"]));
            body = MutateChunked(random, data);
            if (random.Next(10) == 0)
            {
                headers.Add($"Content-Length: {random.Next(0, 50)}");
            }
        }
        else
        {
            body = data;
            var length = random.Next(8) switch
            {
                0 => Pick(random, LengthJunk),
                1 => (data.Length - random.Next(1, data.Length + 1)).ToString(),
                // Longer than what is sent: the server waits, then times the body out (408).
                2 when random.Next(8) == 0 => (data.Length + random.Next(1, 10)).ToString(),
                3 => random.Next(1025, 100_000).ToString(),
                4 => null,
                _ => data.Length.ToString(),
            };
            if (length is not null)
            {
                headers.Add($"Content-Length: {length}");
                if (random.Next(12) == 0)
                {
                    headers.Add($"Content-Length: {Pick(random, [length, data.Length.ToString(), "0"])}");
                }
            }
        }
        Shuffle(random, headers);
        return Encoding.UTF8.GetBytes($"{target} HTTP/1.1\r\n{string.Join("\r\n", headers)}\r\n\r\n{body}");
    }

    private static string MutateChunked(Random random, string data)
    {
        var chunks = new List<(string Size, string AfterSize, string Data, string AfterData)>();
        for (var start = 0; start < data.Length;)
        {
            var length = Math.Min(data.Length - start, random.Next(1, 16));
            chunks.Add((length.ToString("x"), "\r\n", data.Substring(start, length), "\r\n"));
            start += length;
        }
        var terminator = "0\r\n\r\n";
        for (var mutations = random.Next(1, 3); mutations > 0; mutations--)
        {
            var i = random.Next(chunks.Count);
            var chunk = chunks[i];
            chunks[i] = random.Next(9) switch
            {
                0 => chunk with { Size = Pick(random, ChunkSizeJunk) },
                1 => chunk with { AfterSize = Pick(random, ["\n", "\r", "", " \r\n", "\r\r\n"]) },
                2 => chunk with { AfterData = Pick(random, ["", "\n", "xx\r\n", "\r", "\r\n\r\n"]) },
                3 => chunk with { Size = Math.Max(1, chunk.Data.Length + random.Next(-3, 4)).ToString("x") },
                4 => chunk with { Size = chunk.Size + Pick(random, [";a=b", ";", ";a=\"b\"", ";\x01", ";" + new string('e', 5000)]) },
                5 => chunk with { Data = chunk.Data.Insert(random.Next(chunk.Data.Length + 1), Pick(random, ["\r\n", "0\r\n\r\n", "\x00", "\u00ff"])) },
                6 => chunk,
                _ => chunk,
            };
            terminator = random.Next(12) switch
            {
                0 => "0\r\nX-Trailer: 1\r\n\r\n",
                1 => "0\r\nbad trailer\r\n\r\n",
                2 => "0\r\n",
                3 => "00\r\n\r\n",
                // No last chunk at all: the server waits, then times the body out (408).
                4 when random.Next(4) == 0 => "",
                _ => terminator,
            };
        }
        return string.Concat(chunks.Select(c => c.Size + c.AfterSize + c.Data + c.AfterData)) + terminator;
    }

    private static readonly string[] QueryValues =
        ["1", "2", "0", "-1", "01", "1%00", "1%00%00", "%001", "99999999999999999999", "9223372036854775807", "9223372036854775808", "",
         "1.5", "1e3", "%20", "+1", "1+", "%2B1", "abc", "%C3%A9", "%FF", "%", "%%", "%0", "1,2", "1:1", "2:1,1", "1:", ":1", ",", "1,,2",
         "1:0", "1:-1", "1:1%00", "1,1", "1:1,2:1", "3", "1:99999999999999999999", "\u0661", "%EF%BC%91"];

    private static readonly string[] QueryKeys =
        ["topics", "TOPICS", "timeout", "after", "limit", "_", "subs[0][topicid]", "subs[0][from]", "subs[1][topicid]", "subs[1][from]",
         "subs%5B0%5D%5Btopicid%5D", "subs[00][topicid]", "subs[0%00][topicid]", "subs[1%00][topicid]", "subs[0][topicid", "subs[]",
         "subs[-1][topicid]", "subs[999999][topicid]", "subs[0][TopicId]", "subs[0][from]%00", "colour", "", "%00", "timeout%00"];

    private static readonly string[] AcceptValues =
        ["application/json", "multipart/mixed", "*/*", "///", "application/json;q=abc", "application/json;q=2", "text/html",
         "multipart/mixed;q=0.5, application/json;q=0.4", "application/*", ";;;", "application/json;q=", "\u00e9/\u00e9"];

    private byte[] QueryCase(Random random)
    {
        var pairs = new List<string>();
        var path = random.Next(10) < 7 ? "/ps/subscriptions" : "/ps/topics";
        if (path == "/ps/subscriptions")
        {
            if (random.Next(2) == 0)
            {
                pairs.Add($"topics={_topic}:1,{_topic + 1}");
            }
            else
            {
                pairs.Add($"subs[0][topicid]={_topic}");
                pairs.Add("subs[0][from]=1");
            }
            pairs.Add("timeout=0");
        }
        else
        {
            pairs.Add("after=0");
            pairs.Add("limit=10");
        }
        for (var mutations = random.Next(1, 4); mutations > 0; mutations--)
        {
            var i = random.Next(pairs.Count);
            switch (random.Next(7))
            {
                case 0:
                    pairs[i] = pairs[i].Split('=')[0] + "=" + Pick(random, QueryValues);
                    break;
                case 1:
                    pairs.Add(Pick(random, QueryKeys) + "=" + Pick(random, QueryValues));
                    break;
                case 2:
                    pairs.Add(pairs[i]);
                    break;
                case 3:
                    pairs[i] = pairs[i].Replace("=", Pick(random, ["", "==", "=%3D", "&"]));
                    break;
                case 4:
                    pairs[i] = Pick(random, QueryKeys) + pairs[i][pairs[i].IndexOf('=') is var eq and >= 0 ? eq.. : ^0..];
                    break;
                case 5:
                    pairs.RemoveAt(i);
                    break;
                default:
                    pairs[i] += Pick(random, ["%00", "%", "&", "#", "\x7f", " ", "\u00e9", ",", "%2C"]);
                    break;
            }
            if (pairs.Count == 0)
            {
                pairs.Add("topics=");
            }
        }
        var headers = "Host: fuzz\r\nConnection: close\r\n";
        if (path == "/ps/subscriptions" && random.Next(5) == 0)
        {
            headers += $"Accept: {Pick(random, AcceptValues)}\r\n";
        }
        return Encoding.UTF8.GetBytes($"GET {path}?{string.Join("&", pairs)} HTTP/1.1\r\n{headers}\r\n");
    }

    private static string RandomText(Random random, int length)
    {
        var text = new char[length];
        for (var i = 0; i < length; i++)
        {
            text[i] = (char)random.Next(0x21, 0x7f);
        }
        return new string(text);
    }

    private static T Pick<T>(Random random, T[] values) => values[random.Next(values.Length)];

    private static void Shuffle(Random random, List<string> values)
    {
        for (var i = values.Count - 1; i > 0; i--)
        {
            var j = random.Next(i + 1);
            (values[i], values[j]) = (values[j], values[i]);
        }
    }
}
