using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Text.RegularExpressions;
using System.Text;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Tests.Streams;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests;

/// <summary>
/// The connection-level fast path (on by default in the standalone server): on one keep-alive connection it
/// answers polls and publishes itself and hands every other request to the pipeline, in order, with the
/// pipeline's answers; it keeps Kestrel's keep-alive timeout and closes idle connections when the server stops.
/// </summary>
[Collection(nameof(ProcessWideListeners))]
public sealed partial class FastPathTests
{
    private static readonly TimeSpan Bound = WireClient.Bound;

    [Fact]
    public async Task OneKeepAliveConnectionMixesTheFastPathAndThePipelineInOrder()
    {
        await using var server = await StartFastAsync();
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        var created = await ExchangeAsync(connection, Post("/ps/topics", "application/json", "{}"), timeout.Token);
        Assert.Equal(201, created.Status);
        var topic = long.Parse(TopicIdPattern().Match(created.BodyText).Groups[1].Value);
        var published = await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", "one"), timeout.Token);
        var polled = await ExchangeAsync(connection, Get($"/ps/subscriptions?topics={topic}:1"), timeout.Token);
        var info = await ExchangeAsync(connection, Get($"/ps/topics/{topic}"), timeout.Token);
        var invalid = await ExchangeAsync(connection, Get("/ps/subscriptions?topics=abc"), timeout.Token);
        var unknown = await ExchangeAsync(connection, Get("/ps/subscriptions?topics=999999:1"), timeout.Token);
        var second = await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", "two"), timeout.Token);

        Assert.Equal(201, published.Status);
        Assert.Contains("\"messageId\":1", published.BodyText);
        Assert.Equal(200, polled.Status);
        Assert.Contains("\"body\":\"one\"", polled.BodyText);
        Assert.Equal(200, info.Status);
        Assert.Contains("\"lastMessageId\":1", info.BodyText);
        Assert.Equal(400, invalid.Status);
        Assert.Contains("\"topics\"", invalid.BodyText);
        Assert.Equal(404, unknown.Status);
        Assert.Contains("\"topicId\":999999", unknown.BodyText);
        Assert.Equal(201, second.Status);
        Assert.Contains("\"messageId\":2", second.BodyText);
        // Poll, unknown-topic poll and both publishes on the fast path; creation, topic info and the invalid
        // poll on the pipeline, each handed over for its request only.
        Assert.Equal(2, requests.Count("poll"));
        Assert.Equal(2, requests.Count("publish"));
        Assert.Equal(3, requests.Count("pipeline"));
        Assert.Equal(2, requests.Count("pipeline", "route"));
        Assert.Equal(1, requests.Count("pipeline", "query_invalid"));
        Assert.Equal(0, requests.Count("handed_over"));
    }

    /// <summary>
    /// A poll with X-Forwarded-For is the fast path's whether or not its peer is a trusted proxy (KnownProxies: then the
    /// pipeline's own rule finds the client it counts against, TheWaitingPollCapCountsTheClientATrustedProxyForwardsFor);
    /// the header sent twice, whose values the pipeline joins, is the pipeline's.
    /// </summary>
    [Theory]
    [InlineData(false, "X-Forwarded-For: 203.0.113.7", "poll", null)]
    [InlineData(true, "X-Forwarded-For: 203.0.113.7", "poll", null)]
    [InlineData(true, "X-Forwarded-For: 198.51.100.9\r\nX-Forwarded-For: 203.0.113.7", "pipeline", "forwarded_for")]
    public async Task AForwardedPollIsTheFastPathsUnlessTheHeaderIsRepeated(bool proxyTrusted, string headers, string servedBy, string? reason)
    {
        await using var server = await StartFastAsync(proxyTrusted ? new() { ["Laharsub:ForwardedHeaders:KnownProxies:0"] = "127.0.0.1" } : null);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "forwarded");
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        var polled = await ExchangeAsync(connection,
            $"GET /ps/subscriptions?topics={topic}:1 HTTP/1.1\r\nHost: test\r\n{headers}\r\nX-Forwarded-Proto: https\r\n\r\n", timeout.Token);

        Assert.Equal(200, polled.Status);
        Assert.Contains("\"body\":\"forwarded\"", polled.BodyText);
        Assert.Equal(1, requests.Count(servedBy));
        if (reason is not null)
        {
            Assert.Equal(1, requests.Count(servedBy, reason));
        }
    }

    /// <summary>
    /// A header that keeps a request off the fast path and that its client sends on every request (a page's
    /// Origin, a token, an idempotency key) gives the pipeline the rest of the connection, in one
    /// hand-over rather than one per request; a header that a client sends now and then (If-Match, a repeated trace
    /// header) gives it that request only.
    /// </summary>
    [Theory]
    [InlineData("Origin: http://app.example", "handed_over", "origin", 0)]
    [InlineData("Authorization: Bearer abc", "handed_over", "authorization", 0)]
    [InlineData("Idempotency-Key: \"\"", "handed_over", "idempotency_key", 0)]
    [InlineData("If-Match: \"0000000000000000\"", "pipeline", "if_match", 1)]
    // A trace header sent twice: the pipeline joins the values for the propagator.
    [InlineData("baggage: a=1\r\nbaggage: b=2", "pipeline", "trace_context", 1)]
    public async Task AHeaderSentOnEveryRequestGivesThePipelineTheRestOfTheConnection(string header, string handedAs, string reason, int laterPollsOnTheFastPath)
    {
        // A CORS policy that names origins decides by the origin, in the pipeline (with any origin allowed, the
        // fast path answers pages itself: TheFastPathAnswersAPageAsThePipelineDoes).
        await using var server = await StartFastAsync(new() { ["Laharsub:Cors:AllowedOrigins:0"] = "http://app.example" });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "one");
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        var first = await ExchangeAsync(connection,
            $"POST /ps/topics/{topic} HTTP/1.1\r\nHost: test\r\n{header}\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\ntwo", timeout.Token);
        var later = await ExchangeAsync(connection, Get($"/ps/subscriptions?topics={topic}:1"), timeout.Token);

        Assert.True(first.Status is 201 or 400 or 412, $"{first.Status}: {first.BodyText}");
        Assert.Equal(200, later.Status);
        Assert.Contains("\"body\":\"one\"", later.BodyText);
        Assert.Equal(1, requests.Count(handedAs));
        Assert.Equal(1, requests.Count(handedAs, reason));
        Assert.Equal(laterPollsOnTheFastPath, requests.Count("poll"));
    }

    [Fact]
    public async Task WithAllowedHostsSetAPollForAnotherHostIsRefusedAsThePipelineRefusesIt()
    {
        await using var server = await StartFastAsync(new() { ["AllowedHosts"] = "laharsub.example" });
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        var refused = await ExchangeAsync(connection, Get("/ps/subscriptions?topics=1:1&timeout=0"), timeout.Token);

        Assert.Equal(400, refused.Status);
        Assert.Equal(0, requests.Count("poll"));
    }

    [Fact]
    public async Task RequestsWrittenTogetherAreAnsweredInTheirOrder()
    {
        await using var server = await StartFastAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        await connection.SendAsync(
            Post($"/ps/topics/{topic}", "text/plain", "first")
            + Get($"/ps/topics/{topic}")
            + Get($"/ps/subscriptions?topics={topic}:1")
            + Post($"/ps/topics/{topic}", "text/plain", "second"), timeout.Token);

        var answers = new List<RawResponse>();
        for (var i = 0; i < 4; i++)
        {
            answers.Add(await connection.ReadAnswerAsync(timeout.Token) ?? throw new Xunit.Sdk.XunitException($"the connection closed before answer {i + 1}"));
        }
        Assert.Equal([201, 200, 200, 201], answers.Select(answer => answer.Status));
        Assert.Contains("\"messageId\":1", answers[0].BodyText);
        Assert.Contains("\"lastMessageId\":1", answers[1].BodyText);
        Assert.Contains("\"body\":\"first\"", answers[2].BodyText);
        Assert.Contains("\"messageId\":2", answers[3].BodyText);
    }

    [Fact]
    public async Task ARequestWrittenInPartsIsAnswered()
    {
        await using var server = await StartFastAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        var publish = Post($"/ps/topics/{topic}", "text/plain", "in parts");
        foreach (var part in new[] { publish[..7], publish[7..30], publish[30..^3], publish[^3..] })
        {
            await connection.SendAsync(part, timeout.Token);
        }
        var published = await connection.ReadAnswerAsync(timeout.Token);

        Assert.Equal(201, published?.Status);
        Assert.Equal("in parts", (await client.PollAsync($"topics={topic}:1")).Messages.Single().Text);
    }

    /// <summary>
    /// The same requests to a server on the fast path and to one on the pipeline alone get the same status,
    /// headers and bodies, apart from what differs between any two answers (date, epoch, publish time,
    /// trace id) and the framing of the unknown topic's problem (Content-Length where the pipeline chunks).
    /// </summary>
    [Fact]
    public Task TheFastPathAnswersAsThePipelineDoes() => AssertSameAnswersAsync(fastPath => AnswersAsync(fastPath, origin: null));

    /// <summary>
    /// A page's requests (with <c>Origin</c>) are the fast path's too where Laharsub's CORS policy allows any origin,
    /// with the CORS headers the pipeline's answers carry.
    /// </summary>
    [Fact]
    public Task TheFastPathAnswersAPageAsThePipelineDoes() => AssertSameAnswersAsync(fastPath => AnswersAsync(fastPath, origin: "https://app.example"));

    private static async Task<string[]> AnswersAsync(bool fastPath, string? origin)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?> { [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false" });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        using var counter = new FastPathRequestCounter(server.Services);
        string[] requests =
        [
            Post($"/ps/topics/{topic}", "text/plain", "hello"),
            Post($"/ps/topics/{topic}", "application/octet-stream", "\u0001\u0002"),
            // A keyed publish, its replay (the recorded answer, nothing stored), and the key reused for another body.
            Keyed(Post($"/ps/topics/{topic}", "text/plain", "keyed"), "\"8e03978e-40d5-43e8-bc93-6894a57f9324\""),
            Keyed(Post($"/ps/topics/{topic}", "text/plain", "keyed"), "8e03978e-40d5-43e8-bc93-6894a57f9324"),
            Keyed(Post($"/ps/topics/{topic}", "text/plain", "other"), "\"8e03978e-40d5-43e8-bc93-6894a57f9324\""),
            Get($"/ps/subscriptions?topics={topic}:1"),
            Get($"/ps/subscriptions?subs[0][topicid]={topic}&subs[0][from]=2", "application/json"),
            Get($"/ps/subscriptions?topics={topic}:3&timeout=0", "*/*"),
            Get("/ps/subscriptions?topics=999999:1"),
        ];
        var answers = await ExchangeAllAsync(connection, requests, origin, timeout.Token);
        Assert.Equal(fastPath ? 4 : 0, counter.Count("poll"));
        Assert.Equal(fastPath ? 4 : 0, counter.Count("publish"));
        Assert.Equal(fastPath ? 1 : 0, counter.Count("pipeline", "store_refused"));
        return answers;
    }

    /// <summary>Sends each request on one connection in turn; the answers without what varies (dates, epochs, a 404's framing).</summary>
    private static async Task<string[]> ExchangeAllAsync(RawConnection connection, string[] requests, string? origin, CancellationToken cancellationToken)
    {
        var answers = new List<string>();
        foreach (var line in requests)
        {
            var request = origin is null ? line : line.Replace("Host: test\r\n", $"Host: test\r\nOrigin: {origin}\r\n", StringComparison.Ordinal);
            var answer = await ExchangeAsync(connection, request, cancellationToken);
            var headers = answer.Head.Split("\r\n")
                .Where(line => !line.StartsWith("Date:", StringComparison.Ordinal)
                    && !(answer.Status == 404 && (line.StartsWith("Content-Length:", StringComparison.Ordinal) || line.StartsWith("Transfer-Encoding:", StringComparison.Ordinal))));
            answers.Add(Normalized(string.Join("\n", headers) + "\n\n" + answer.BodyText));
        }
        return [.. answers];
    }

    /// <summary>
    /// An event stream on the fast path sends what the pipeline's sends, framing included (a chunk per send),
    /// resumes from <c>Last-Event-ID</c> as it does, and answers an unknown topic with the same 404.
    /// </summary>
    [Fact]
    public Task TheFastPathStreamsEventsAsThePipelineDoes() => AssertSameAnswersAsync(fastPath => EventStreamAnswersAsync(fastPath, origin: null));

    [Fact]
    public Task TheFastPathStreamsEventsToAPageAsThePipelineDoes() => AssertSameAnswersAsync(fastPath => EventStreamAnswersAsync(fastPath, origin: "https://app.example"));

    private static async Task<string[]> EventStreamAnswersAsync(bool fastPath, string? origin)
    {
        var originHeader = origin is null ? "" : $"Origin: {origin}\r\n";
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?> { [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false" });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "one");
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        var answers = new List<string>();

        using (var stream = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            await stream.SendAsync(Get($"/ps/subscriptions?topics={topic}:1", "text/event-stream").Replace("Host: test\r\n", "Host: test\r\n" + originHeader, StringComparison.Ordinal), timeout.Token);
            answers.Add(await stream.ReadThroughAsync("\"body\":\"one\"}\n\n\r\n", timeout.Token));
            await client.PublishTextAsync(topic, "two");
            answers.Add(await stream.ReadThroughAsync("\"body\":\"two\"}\n\n\r\n", timeout.Token));
        }
        using (var resumed = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            var epoch = await client.EpochAsync(topic);
            await resumed.SendAsync($"GET /ps/subscriptions?topics={topic} HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n{originHeader}Last-Event-ID: {topic}:2~{epoch}\r\n\r\n", timeout.Token);
            answers.Add(await resumed.ReadThroughAsync("\"body\":\"two\"}\n\n\r\n", timeout.Token));
        }
        using (var unknown = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            var answer = await ExchangeAsync(unknown, Get("/ps/subscriptions?topics=999999", "text/event-stream").Replace("Host: test\r\n", "Host: test\r\n" + originHeader, StringComparison.Ordinal), timeout.Token);
            // Framed by length here, chunked by the pipeline, as the poll's 404 (TheFastPathAnswersAsThePipelineDoes).
            var head = answer.Head.Split("\r\n").Where(line => !line.StartsWith("Content-Length:", StringComparison.Ordinal) && !line.StartsWith("Transfer-Encoding:", StringComparison.Ordinal));
            answers.Add(string.Join("\n", head) + "\n\n" + answer.BodyText);
        }

        Assert.Equal(fastPath ? 3 : 0, requests.Count("stream"));
        return [.. answers.Select(answer => ChunkSizePattern().Replace(DatePattern().Replace(Normalized(answer), "Date: <varies>"), "\r\n<chunk size>\r\n"))];
    }

    /// <summary>
    /// The fast path accepts a WebSocket as the pipeline does: the same 101 (subprotocol chosen, CORS headers
    /// for an upgrade from a page), the same frames for subscriptions, publish frames, an unknown topic and the
    /// client's close; and leaves a query the pipeline refuses to the pipeline.
    /// </summary>
    [Fact]
    public Task TheFastPathAcceptsWebSocketsAsThePipelineDoes() => AssertSameAnswersAsync(WebSocketAnswersAsync);

    private static async Task<string[]> WebSocketAnswersAsync(bool fastPath)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?> { [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false" });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "one");
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        var answers = new List<string>();

        using (var socket = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            await socket.SendAsync(Upgrade($"/ps/subscriptions?topics={topic}:1", "Sec-WebSocket-Protocol: chat, laharsub.v1\r\n"), timeout.Token);
            answers.Add(await socket.ReadThroughAsync("\"body\":\"one\"}}", timeout.Token));
            await socket.SendAsync(MaskedFrame(0x1, Encoding.UTF8.GetBytes($"{{\"type\":\"publish\",\"id\":\"p\",\"topicId\":{topic},\"body\":\"two\"}}")), timeout.Token);
            answers.Add(await socket.ReadThroughAsync("\"body\":\"two\"}}", timeout.Token));
            await socket.SendAsync(MaskedFrame(0x8, [0x03, 0xE8]), timeout.Token);
            answers.Add(await socket.ReadThroughAsync("Closed by the client.", timeout.Token));
        }
        using (var fromPage = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            await fromPage.SendAsync(Upgrade("/ps/subscriptions?topics=999999", "Origin: https://app.example\r\n"), timeout.Token);
            answers.Add(await fromPage.ReadThroughAsync("\"topicId\":999999}}", timeout.Token));
        }
        using (var noTopic = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            await noTopic.SendAsync(Upgrade("/ps/subscriptions", ""), timeout.Token);
            answers.Add(await noTopic.ReadThroughAsync("\"topics\":[]}", timeout.Token));
        }
        using (var refused = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            var answer = await ExchangeAsync(refused, Upgrade("/ps/subscriptions?topics=abc", ""), timeout.Token);
            answers.Add(answer.Head + "\n\n" + answer.BodyText);
        }

        Assert.Equal(fastPath ? 3 : 0, requests.Count("websocket"));
        return [.. answers.Select(answer => DatePattern().Replace(Normalized(answer), "Date: <varies>"))];
    }

    /// <summary>A client's frame (RFC 6455: final, masked) with a payload under 126 bytes.</summary>
    private static byte[] MaskedFrame(byte opcode, byte[] payload)
    {
        byte[] mask = [0x12, 0x34, 0x56, 0x78];
        return [(byte)(0x80 | opcode), (byte)(0x80 | payload.Length), .. mask, .. payload.Select((b, i) => (byte)(b ^ mask[i % 4]))];
    }

    /// <summary>
    /// ASP.NET Core's request metrics (<c>http.server.request.duration</c>) count the fast path's requests with
    /// the tags the pipeline gives the same requests: the same route, method, scheme, protocol and status.
    /// </summary>
    [Fact]
    public async Task HostingsRequestMetricsCountFastPathRequestsAsThePipelineCountsThem()
    {
        var fast = await RequestMetricsAsync(fastPath: true);
        var pipeline = await RequestMetricsAsync(fastPath: false);

        Assert.Equal(4, fast.Length);
        Assert.Equal(pipeline, fast);
    }

    private static async Task<string[]> RequestMetricsAsync(bool fastPath)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?> { [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false" });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var requests = new FastPathRequestCounter(server.Services);
        using var recorded = new HostingRequestRecorder(server);
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        Assert.Equal(201, (await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", "measured"), timeout.Token)).Status);
        Assert.Equal(200, (await ExchangeAsync(connection, Get($"/ps/subscriptions?topics={topic}:1"), timeout.Token)).Status);
        Assert.Equal(404, (await ExchangeAsync(connection, Get("/ps/subscriptions?topics=999999:1"), timeout.Token)).Status);
        Assert.Equal(201, (await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", "again"), timeout.Token)).Status);

        Assert.Equal(fastPath ? 2 : 0, requests.Count("poll"));
        Assert.Equal(fastPath ? 2 : 0, requests.Count("publish"));
        // The pipeline records a request's duration after its answer is sent; the fast path as it is sent.
        await Eventually.HoldsAsync(() => Task.FromResult(recorded.Requests.Count == 4), Bound, $"hosting recorded {recorded.Requests.Count} of the 4 requests");
        Assert.Equal(0, recorded.Active);
        return [.. recorded.Requests];
    }

    private static string Normalized(string answer) => VaryingPattern().Replace(answer, "${name}<varies>");

    [Fact]
    public async Task AConnectionIdleForKestrelsKeepAliveTimeoutIsClosed()
    {
        await using var server = await StartFastAsync(services: services =>
            services.Configure<KestrelServerOptions>(kestrel => kestrel.Limits.KeepAliveTimeout = TimeSpan.FromSeconds(2)));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        Assert.Equal(201, (await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", "x"), timeout.Token)).Status);

        Assert.True(await connection.ClosedByServerAsync(timeout.Token), "the server sent something on an idle connection instead of closing it");
    }

    [Fact]
    public async Task StoppingTheServerClosesAnIdleConnectionAndAnswersAHeldPollWithConnectionClose()
    {
        var server = await StartFastAsync();
        try
        {
            using var client = server.CreateClient();
            var topic = await client.CreateTopicAsync();
            using var timeout = new CancellationTokenSource(Bound);
            using var idle = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
            Assert.Equal(201, (await ExchangeAsync(idle, Post($"/ps/topics/{topic}", "text/plain", "x"), timeout.Token)).Status);
            using var polling = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
            await polling.SendAsync(Get($"/ps/subscriptions?topics={topic}:2&timeout=60"), timeout.Token);
            await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), Bound, "the poll never waited");

            var stopping = server.StopAsync();
            var held = await polling.ReadAnswerAsync(timeout.Token);

            Assert.Equal(204, held?.Status);
            Assert.Equal("close", held?.Header("Connection"));
            Assert.True(await idle.ClosedByServerAsync(timeout.Token), "the idle connection got something other than a close");
            await stopping.WaitAsync(timeout.Token);
        }
        finally
        {
            await server.DisposeAsync();
        }
    }

    /// <summary>The answers of a server on the fast path, one by one, against the same server's on the pipeline.</summary>
    private static async Task AssertSameAnswersAsync(Func<bool, Task<string[]>> answers)
    {
        var fast = await answers(true);
        var pipeline = await answers(false);

        Assert.Equal(pipeline.Length, fast.Length);
        for (var i = 0; i < fast.Length; i++)
        {
            Assert.Equal(pipeline[i], fast[i]);
        }
    }

    /// <summary>A server on the fast path whatever the environment says (test.sh runs this suite a second time with it off).</summary>
    private static Task<LaharsubTestServer> StartFastAsync(Dictionary<string, string?>? settings = null, Action<IServiceCollection>? services = null)
    {
        settings ??= [];
        settings[StandaloneHost.FastPathSetting] = "true";
        return LaharsubTestServer.StartAsync(services: services, settings: settings);
    }

    private static async Task<RawResponse> ExchangeAsync(RawConnection connection, string request, CancellationToken cancellationToken)
    {
        await connection.SendAsync(request, cancellationToken);
        return await connection.ReadAnswerAsync(cancellationToken) ?? throw new Xunit.Sdk.XunitException($"the server closed the connection instead of answering {request.Split("\r\n")[0]}");
    }

    private static string Get(string target, string? accept = null) =>
        $"GET {target} HTTP/1.1\r\nHost: test\r\n" + (accept is null ? "" : $"Accept: {accept}\r\n") + "\r\n";

    /// <summary>A WebSocket handshake (RFC 6455's sample key) with <paramref name="headers"/>, each line ending in CRLF.</summary>
    private static string Upgrade(string target, string headers) =>
        $"GET {target} HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
        + $"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{headers}\r\n";

    private static string Keyed(string request, string key) => WithHeader(request, "Idempotency-Key", key);

    /// <summary>The request with one header more, after its Host.</summary>
    private static string WithHeader(string request, string name, string value) =>
        request.Replace("Host: test\r\n", $"Host: test\r\n{name}: {value}\r\n", StringComparison.Ordinal);

    private static string Post(string target, string contentType, string body) =>
        $"POST {target} HTTP/1.1\r\nHost: test\r\nContent-Type: {contentType}\r\nContent-Length: {body.Length}\r\n\r\n{body}";

    [GeneratedRegex("\"topicId\":(\\d+)")]
    private static partial Regex TopicIdPattern();

    [GeneratedRegex("(?<name>\"epoch\":\"|ETag: \"|\"publishedAt\":\"|\"traceId\":\"|~)[^\"\n]*")]
    private static partial Regex VaryingPattern();

    [GeneratedRegex("Date: [^\r\n]*")]
    private static partial Regex DatePattern();

    [GeneratedRegex("\r\n[0-9a-f]+\r\n")]
    private static partial Regex ChunkSizePattern();

    /// <summary>
    /// Hosting's <c>http.server.request.duration</c> measurements of one server, each as its sorted tags, and
    /// the sum of its <c>http.server.active_requests</c> changes.
    /// </summary>
    private sealed class HostingRequestRecorder : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly ConcurrentQueue<string> _requests = new();
        private long _active;

        public HostingRequestRecorder(LaharsubTestServer server)
        {
            var meters = server.Services.GetRequiredService<IMeterFactory>();
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == "Microsoft.AspNetCore.Hosting" && ReferenceEquals(instrument.Meter.Scope, meters)
                    && instrument.Name is "http.server.request.duration" or "http.server.active_requests")
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<double>((_, _, tags, _) =>
                _requests.Enqueue(string.Join(", ", tags.ToArray().Select(tag => $"{tag.Key}={tag.Value}").Order(StringComparer.Ordinal))));
            _listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref _active, value));
            _listener.Start();
        }

        public ConcurrentQueue<string> Requests => _requests;

        public long Active => Interlocked.Read(ref _active);

        public void Dispose() => _listener.Dispose();
    }
}
