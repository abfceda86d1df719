using System.Net;
using System.Text;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// <c>Laharsub:RateLimit</c> and <c>X-Forwarded-For</c> on the fast path: a publish within its client's budget is served
/// below the pipeline from the one bucket the pipeline's rate limiter and the sockets' publish frames draw on, a refusal is
/// the pipeline's 429; behind a trusted proxy the client is the one the pipeline's forwarded-headers rule finds. Each test
/// runs with the fast path on and off, and expects the same.
/// </summary>
public sealed partial class FastPathTests
{
    /// <summary>A proxy address (<see cref="Loopback.Neighbour"/>, 127.0.0.2) and the clients it forwards for (documentation ranges).</summary>
    private const string Client7 = "203.0.113.7";
    private const string Client8 = "203.0.113.8";
    private const string Client9 = "198.51.100.9";

    [Fact]
    public Task TheFastPathAnswersRateLimitedPublishesAsThePipelineDoes() => AssertSameAnswersAsync(RateLimitedAnswersAsync);

    private static async Task<string[]> RateLimitedAnswersAsync(bool fastPath)
    {
        // Three permits an hour, none back while the test runs; the topic is made in the store, leaving all three.
        await using var rig = await Rig.StartAsync(RateLimitSettings(3, fastPath));
        var topic = rig.Topic;
        using var connection = await rig.ConnectAsync();
        string[] requests =
        [
            Post($"/ps/topics/{topic}", "text/plain", "one"),
            // Refused by the store once its permit is drawn: the pipeline answers it without drawing a second one.
            Post("/ps/topics/999999", "text/plain", "lost"),
            Post($"/ps/topics/{topic}", "text/plain", "two"),
            // The bucket is empty: refused, nothing stored, and the connection goes on.
            Post($"/ps/topics/{topic}", "text/plain", "three"),
            Get($"/ps/subscriptions?topics={topic}:1&timeout=0"),
        ];

        var answers = await ExchangeAllAsync(connection, requests, origin: null, rig.Token);

        Assert.Equal(["201", "404", "201", "429", "200"], answers.Select(answer => answer.Split(' ')[1]));
        Assert.Contains("\nRetry-After: 3600\n", answers[3]);
        Assert.Contains("Laharsub:RateLimit:RequestsPerPeriod", answers[3]);
        Assert.Contains("\"body\":\"one\"", answers[4]);
        Assert.Contains("\"body\":\"two\"", answers[4]);
        Assert.DoesNotContain("three", answers[4]);
        Assert.Equal(fastPath ? 2 : 0, rig.Requests.Count("publish"));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("pipeline", "store_refused"));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("pipeline", "rate_limit"));
        return answers;
    }

    /// <summary>
    /// A topic's creation (always the pipeline's), a publish (the fast path's when it is on) and a socket's publish frame
    /// (on a socket the fast path accepts when it is on) spend one client's one bucket.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task ThePipelineTheFastPathAndSocketFramesDrawOnOneBucket(bool fastPath)
    {
        await using var rig = await Rig.StartAsync(RateLimitSettings(3, fastPath));
        using var connection = await rig.ConnectAsync();
        using var socket = await rig.ConnectAsync();

        var created = await ExchangeAsync(connection, Post("/ps/topics", "application/json", "{}"), rig.Token);
        Assert.Equal(201, created.Status);
        var topic = long.Parse(TopicIdPattern().Match(created.BodyText).Groups[1].Value);
        Assert.Equal(201, (await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", "posted"), rig.Token)).Status);
        await OpenSocketAsync(socket, "", rig.Token);
        var published = await PublishFrameAsync(socket, topic, "p1", rig.Token);
        var refusedFrame = await PublishFrameAsync(socket, topic, "p2", rig.Token);
        var refused = await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", "over"), rig.Token);

        Assert.StartsWith("{\"type\":\"published\"", published);
        Assert.StartsWith("{\"type\":\"problem\"", refusedFrame);
        Assert.Contains("\"status\":429", refusedFrame);
        Assert.Contains("\"retryAfter\":3600", refusedFrame);
        Assert.Equal(429, refused.Status);
        Assert.Equal("3600", refused.Header("Retry-After"));
        Assert.Equal(["posted", "frame p1"], await StoredAsync(rig.Server, topic));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("websocket"));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("publish"));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("pipeline", "route"));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("pipeline", "rate_limit"));
    }

    /// <summary>
    /// In Jwt mode a client is its token's subject: a socket opened with a token the pipeline validated (the fast path's)
    /// spends that subject's bucket, not its address's, which another subject on the same address does not share.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task ASocketOpenedWithATokenDrawsOnItsSubjectsBucket(bool fastPath)
    {
        await using var rig = await Rig.StartAsync(TestTokens.JwtSettings(anonymous: null,
            (StandaloneHost.FastPathSetting, fastPath ? "true" : "false"), ("Laharsub:RateLimit:RequestsPerPeriod", "2"), ("Laharsub:RateLimit:Period", "01:00:00")));
        const string Grants = """{"publish":true,"subscribe":true}""";
        var alice = TestTokens.Grant(Grants, subject: "alice");
        var bob = TestTokens.Grant(Grants, subject: "bob");
        var topic = rig.Topic;
        using var connection = await rig.ConnectAsync();
        using var socket = await rig.ConnectAsync();

        // Alice's first request: the pipeline validates her token (and remembers it), and draws her first permit.
        Assert.Equal(201, (await ExchangeAsync(connection, Bearer(Post($"/ps/topics/{topic}", "text/plain", "posted"), alice), rig.Token)).Status);
        await OpenSocketAsync(socket, $"Authorization: Bearer {alice}\r\n", rig.Token);
        var published = await PublishFrameAsync(socket, topic, "p1", rig.Token);
        var refusedFrame = await PublishFrameAsync(socket, topic, "p2", rig.Token);
        var other = await ExchangeAsync(connection, Bearer(Post($"/ps/topics/{topic}", "text/plain", "bob's"), bob), rig.Token);

        Assert.StartsWith("{\"type\":\"published\"", published);
        Assert.Contains("\"status\":429", refusedFrame);
        Assert.Equal(201, other.Status);
        Assert.Equal(["posted", "frame p1", "bob's"], await StoredAsync(rig.Server, topic));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("websocket"));
        Assert.Equal(fastPath ? 2 : 0, rig.Requests.Count("pipeline", "token_unvalidated"));
    }

    /// <summary>
    /// Behind a trusted proxy each client the proxy forwards for has a bucket of its own, found by the pipeline's rule (the
    /// walk from the right stops at the first address that is not a trusted proxy), a socket's frames included; the
    /// proxy's own requests count for the proxy.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task BehindATrustedProxyEachForwardedClientHasItsOwnBucket(bool fastPath)
    {
        await using var rig = await Rig.StartAsync(RateLimitSettings(1, fastPath, ("Laharsub:ForwardedHeaders:KnownProxies:0", Loopback.Neighbour.ToString())));
        var topic = rig.Topic;
        using var proxy = await rig.ConnectAsync(Loopback.Neighbour);
        using var socket = await rig.ConnectAsync(Loopback.Neighbour);

        await OpenSocketAsync(socket, $"X-Forwarded-For: {Client7}\r\n", rig.Token);
        var published = await PublishFrameAsync(socket, topic, "p1", rig.Token);
        var statuses = new List<int>();
        foreach (var forwardedFor in new[] { Client7, $"{Client9}, {Client8}", Client9, null })
        {
            var request = Post($"/ps/topics/{topic}", "text/plain", $"for {forwardedFor ?? "the proxy"}");
            statuses.Add((await ExchangeAsync(proxy, forwardedFor is null ? request : Forwarded(request, forwardedFor), rig.Token)).Status);
        }

        Assert.StartsWith("{\"type\":\"published\"", published);
        // 203.0.113.7 spent its permit on the socket; "198.51.100.9, 203.0.113.8" is 203.0.113.8's (not a trusted proxy),
        // so 198.51.100.9's own permit is left; the proxy has its own.
        Assert.Equal([429, 201, 201, 201], statuses);
        Assert.Equal(["frame p1", $"for {Client9}, {Client8}", $"for {Client9}", "for the proxy"], await StoredAsync(rig.Server, topic));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("websocket"));
        Assert.Equal(fastPath ? 3 : 0, rig.Requests.Count("publish"));
        Assert.Equal(fastPath ? 1 : 0, rig.Requests.Count("pipeline", "rate_limit"));
    }

    /// <summary>
    /// The waiting-poll cap counts the client a trusted proxy forwards for, on the fast path as on the pipeline; from a
    /// peer that is not a trusted proxy the header is ignored, as the pipeline ignores it, and the peer is the client.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task TheWaitingPollCapCountsTheClientATrustedProxyForwardsFor(bool fastPath)
    {
        await using var rig = await Rig.StartAsync(new Dictionary<string, string?>
        {
            [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false",
            ["Laharsub:Limits:MaxWaitingPollsPerClient"] = "1",
            ["Laharsub:ForwardedHeaders:KnownProxies:0"] = Loopback.Neighbour.ToString(),
        });
        var topic = rig.Topic;
        using var heldThroughProxy = await rig.ConnectAsync(Loopback.Neighbour);
        using var proxy = await rig.ConnectAsync(Loopback.Neighbour);
        using var heldDirect = await rig.ConnectAsync(Loopback.Attacker);
        using var direct = await rig.ConnectAsync(Loopback.Attacker);
        var quickPoll = Get($"/ps/subscriptions?topics={topic}&timeout=0");

        await heldThroughProxy.SendAsync(Forwarded(Get($"/ps/subscriptions?topics={topic}&timeout=60"), Client7), rig.Token);
        await Eventually.HoldsAsync(() => Task.FromResult(rig.Server.WaitingPolls(topic) == 1), Bound, "the forwarded poll never waited");
        var sameClient = await ExchangeAsync(proxy, Forwarded(quickPoll, Client7), rig.Token);
        var otherClient = await ExchangeAsync(proxy, Forwarded(quickPoll, Client8), rig.Token);
        var theProxy = await ExchangeAsync(proxy, quickPoll, rig.Token);
        // Not a trusted proxy: its header does not make it 203.0.113.7 (at the cap) ...
        var untrusted = await ExchangeAsync(direct, Forwarded(quickPoll, Client7), rig.Token);
        // ... and whatever it names, it is 127.0.0.1, whose one waiting poll it then holds.
        await heldDirect.SendAsync(Forwarded(Get($"/ps/subscriptions?topics={topic}&timeout=60"), Client8), rig.Token);
        await Eventually.HoldsAsync(() => Task.FromResult(rig.Server.WaitingPolls(topic) == 2), Bound, "the direct poll never waited");
        // The count can include a quick poll's wait ending just after its answer: ask until the held poll has its permit.
        RawResponse untrustedAgain = default!;
        var early = 0;
        await Eventually.HoldsAsync(async () =>
        {
            untrustedAgain = await ExchangeAsync(direct, Forwarded(quickPoll, Client9), rig.Token);
            early += untrustedAgain.Status == 204 ? 1 : 0;
            return untrustedAgain.Status == 429;
        }, Bound, "the direct client's held poll never counted");

        Assert.Equal(429, sameClient.Status);
        Assert.Contains($"Client {Client7} already holds 1 waiting polls", sameClient.BodyText);
        Assert.Equal([204, 204, 204], new[] { otherClient.Status, theProxy.Status, untrusted.Status });
        Assert.Equal(429, untrustedAgain.Status);
        Assert.Contains($"Client {Loopback.Attacker} already holds 1 waiting polls", untrustedAgain.BodyText);
        Assert.Equal(fastPath ? 5 + early : 0, rig.Requests.Count("poll"));
        Assert.Equal(fastPath ? 2 : 0, rig.Requests.Count("pipeline", "waiting_poll_cap"));
    }

    private static Dictionary<string, string?> RateLimitSettings(int perHour, bool fastPath, params (string Key, string? Value)[] more)
    {
        var settings = new Dictionary<string, string?>
        {
            [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false",
            ["Laharsub:RateLimit:RequestsPerPeriod"] = perHour.ToString(System.Globalization.CultureInfo.InvariantCulture),
            // No permit comes back while a test runs, however slow the machine.
            ["Laharsub:RateLimit:Period"] = "01:00:00",
        };
        foreach (var (key, value) in more)
        {
            settings[key] = value;
        }
        return settings;
    }

    private static string Forwarded(string request, string forwardedFor) => WithHeader(request, "X-Forwarded-For", forwardedFor);

    private static string Bearer(string request, string token) => WithHeader(request, "Authorization", $"Bearer {token}");

    /// <summary>Opens a socket of no topic on <paramref name="connection"/>, with <paramref name="headers"/> on its upgrade.</summary>
    private static async Task OpenSocketAsync(RawConnection connection, string headers, CancellationToken cancellationToken)
    {
        await connection.SendAsync("GET /ps/subscriptions HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
            + $"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: laharsub.v1\r\n{headers}\r\n", cancellationToken);
        await connection.ReadThroughAsync("\"topics\":[]}", cancellationToken);
    }

    /// <summary>Sends a publish frame of body <c>frame {id}</c> and returns the server's answer to it (<c>published</c> or <c>problem</c>), from its type on.</summary>
    private static async Task<string> PublishFrameAsync(RawConnection socket, long topic, string id, CancellationToken cancellationToken)
    {
        await socket.SendAsync(MaskedFrame(0x1, Encoding.UTF8.GetBytes($"{{\"type\":\"publish\",\"id\":\"{id}\",\"topicId\":{topic},\"body\":\"frame {id}\"}}")), cancellationToken);
        var upToId = await socket.ReadThroughAsync($"\"id\":\"{id}\"", cancellationToken);
        var answer = upToId[upToId.LastIndexOf("{\"type\":", StringComparison.Ordinal)..];
        // A frame's JSON ends with its object; a problem's nests one.
        return answer + await socket.ReadThroughAsync(answer.StartsWith("{\"type\":\"problem\"", StringComparison.Ordinal) ? "}}" : "}", cancellationToken);
    }

    /// <summary>The bodies stored in <paramref name="topic"/>, in order.</summary>
    private static async Task<string[]> StoredAsync(LaharsubTestServer server, long topic)
    {
        var messages = new List<Laharsub.Server.Storage.Message>();
        await server.Store.ReadAsync(new Laharsub.Server.Storage.TopicReadRequest[] { new(topic, 1, 100, 1 << 20) }, new Laharsub.Server.Storage.TopicReadResult[1], messages)
            .AsTask().WaitAsync(Bound);
        return [.. messages.Select(message => Encoding.UTF8.GetString(message.Body.Span))];
    }

    /// <summary>
    /// A started server with a topic made in its store (spending no permit), the fast path's counts of its requests, and
    /// the bound of a test's exchanges.
    /// </summary>
    private sealed class Rig : IAsyncDisposable
    {
        private readonly CancellationTokenSource _timeout = new(Bound);

        private Rig(LaharsubTestServer server, long topic)
        {
            Server = server;
            Topic = topic;
            Requests = new FastPathRequestCounter(server.Services);
        }

        public LaharsubTestServer Server { get; }

        public long Topic { get; }

        public FastPathRequestCounter Requests { get; }

        public CancellationToken Token => _timeout.Token;

        public static async Task<Rig> StartAsync(IReadOnlyDictionary<string, string?> settings)
        {
            var server = await LaharsubTestServer.StartAsync(settings: settings);
            try
            {
                return new Rig(server, (await server.Store.CreateTopicAsync().AsTask().WaitAsync(Bound))!.TopicId);
            }
            catch
            {
                await server.DisposeAsync();
                throw;
            }
        }

        /// <summary>A connection to the server, from <paramref name="source"/> when given (127.0.0.1 otherwise).</summary>
        public Task<RawConnection> ConnectAsync(IPAddress? source = null) =>
            source is null ? RawConnection.OpenAsync(Server.BaseAddress, Token) : RawConnection.OpenAsync(Server.BaseAddress, source, Token);

        public async ValueTask DisposeAsync()
        {
            Requests.Dispose();
            _timeout.Dispose();
            await Server.DisposeAsync();
        }
    }
}
