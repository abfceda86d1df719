using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// <c>MaxRetainedBytes</c> bounds the server process's resident memory, not only what it counts: the real
/// server (in memory) is filled with worst-case messages until it answers 507, every message is read in
/// JSON and in multipart (so both wire encodings are made), and the growth of its RSS (VmRSS) must stay
/// within the factor the README states. One case per worst case of docs/reliability.md.
/// </summary>
public sealed class RssBoundTests(Xunit.Abstractions.ITestOutputHelper output)
{
    /// <summary>The factor docs/operations.md states ("Memory"): RSS growth at most this times <c>MaxRetainedBytes</c>.</summary>
    private const double StatedFactor = 2.5;

    private const long MaxRetained = 40_000_000;

    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    public static TheoryData<string, int, int, int> WorstCases => new()
    {
        // JSON escapes a control character six-fold (\u0001): the largest encoding of a text body.
        { "200 KB of control characters", 200_000, 0, 0 },
        // The content type is kept as a string (two bytes a character) and repeated in both encodings.
        { "1 byte, 256-character content type", 1, 256, 0 },
        // Where the objects around a body weigh most.
        { "1 byte", 1, 0, 0 },
        // Each remembered Idempotency-Key is kept with its message: a UUID, as both clients send by default,
        // and the longest key the server takes.
        { "1 byte, 36-character key", 1, 0, 36 },
        { "1 byte, 255-character key", 1, 0, 255 },
    };

    [Theory]
    [MemberData(nameof(WorstCases))]
    public async Task FilledWithWorstCaseMessagesAndReadInBothFormatsTheProcessGrowsWithinTheStatedFactor(string name, int bodyBytes, int contentTypeChars, int keyChars)
    {
        // The standalone server's default, whatever the environment says: the bound is the fast path's (docs/operations.md,
        // "Memory": requests the pipeline serves leave garbage that the collector's budget, not the count, bounds).
        await using var server = await HostProcess.StartAsync(
            $"Laharsub:MaxRetainedBytes={MaxRetained}", "Laharsub:MaxMessagesPerTopic=1000000", "Laharsub:MessageTimeToLive=01:00:00",
            "Laharsub:Demo:Enabled=false", "Laharsub:FastPath:Enabled=true");
        using var http = new HttpClient { BaseAddress = server.ApiAddress, Timeout = Bound };
        var body = new byte[bodyBytes];
        Array.Fill(body, bodyBytes == 1 ? (byte)'x' : (byte)1);
        var contentType = contentTypeChars == 0 ? "text/plain" : "text/plain; p=" + new string('a', contentTypeChars - 14);
        using var created = await http.PostAsync("topics", null).WaitAsync(Bound);
        var topic = JsonDocument.Parse(await created.Content.ReadAsStringAsync()).RootElement.GetProperty("topicId").GetInt64();
        var before = ResidentBytes(server.ProcessId);

        // Four publishers until the server is full: it must say so (507), never grow on.
        var counts = await Task.WhenAll(Enumerable.Range(0, 4).Select(async publisher =>
        {
            var stored = 0;
            while (true)
            {
                using var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new ByteArrayContent(body) };
                request.Content.Headers.ContentType = MediaTypeHeaderValue.Parse(contentType);
                if (keyChars > 0)
                {
                    request.Headers.TryAddWithoutValidation("Idempotency-Key", $"\"{$"{publisher}-{stored}-".PadRight(keyChars, 'k')}\"");
                }
                using var response = await http.SendAsync(request).WaitAsync(Bound);
                if (response.StatusCode != HttpStatusCode.Created)
                {
                    Assert.Equal(HttpStatusCode.InsufficientStorage, response.StatusCode);
                    return stored;
                }
                stored++;
                Assert.True(stored < 200_000, "retention never filled");
            }
        }));
        var total = counts.Sum();
        var jsonRead = await ReadAllAsync(http, topic, "application/json");
        var multipartRead = await ReadAllAsync(http, topic, "multipart/mixed");
        var grown = ResidentBytes(server.ProcessId) - before;

        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{name}: {total} messages, RSS grew {grown / 1e6:0.0} MB, {grown / (double)MaxRetained:0.00} x MaxRetainedBytes ({MaxRetained / 1e6:0} MB)"));
        Assert.Equal((total, total), (jsonRead, multipartRead));
        Assert.True(grown <= StatedFactor * MaxRetained,
            $"{name}: {total} retained messages grew the server's RSS by {grown / 1e6:0.0} MB, above {StatedFactor} x MaxRetainedBytes ({StatedFactor * MaxRetained / 1e6:0} MB)");
    }

    /// <summary>Reads the whole topic in <paramref name="accept"/>, poll after poll, and returns how many messages came.</summary>
    private static async Task<int> ReadAllAsync(HttpClient http, long topic, string accept)
    {
        var next = 1L;
        var read = 0;
        while (true)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}:{next}&timeout=0");
            request.Headers.Accept.ParseAdd(accept);
            using var response = await http.SendAsync(request).WaitAsync(Bound);
            if (response.StatusCode == HttpStatusCode.NoContent)
            {
                return read;
            }
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            var answer = await response.Content.ReadAsByteArrayAsync().WaitAsync(Bound);
            var count = accept == "application/json"
                ? JsonDocument.Parse(answer).RootElement.GetProperty("messages").EnumerateArray().Count(m => m.TryGetProperty("messageId", out _))
                : Occurrences(answer, "Laharsub-Message-Id: "u8);
            Assert.True(count > 0, $"a {accept} poll from {next} answered 200 with no message");
            next += count;
            read += count;
        }
    }

    private static int Occurrences(ReadOnlySpan<byte> text, ReadOnlySpan<byte> needle)
    {
        var count = 0;
        for (var at = text.IndexOf(needle); at >= 0; at = text.IndexOf(needle))
        {
            count++;
            text = text[(at + needle.Length)..];
        }
        return count;
    }

    /// <summary>The process's resident set (VmRSS of /proc/PID/status).</summary>
    private static long ResidentBytes(int processId)
    {
        var line = File.ReadLines($"/proc/{processId}/status").First(l => l.StartsWith("VmRSS:", StringComparison.Ordinal));
        return long.Parse(line["VmRSS:".Length..].Trim().Split(' ')[0], CultureInfo.InvariantCulture) * 1024;
    }
}
