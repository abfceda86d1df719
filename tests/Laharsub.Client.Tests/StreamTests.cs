using System.Text;
using System.Net;
using System.Threading.Channels;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>What only streams have: publishing on the WebSocket, a reader slower than the socket, tokens on the upgrade, and a stream that falls silent.</summary>
public sealed class StreamTests
{
    private const string Everything = """{"create":true,"publish":true,"subscribe":true,"list":true,"delete":true}""";

    [Fact]
    public async Task APublishOnTheWebSocketIsAnsweredOnItWithoutARequest()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options(transport: LaharsubTransport.WebSocket));
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(topic.TopicId, 1)]));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(reader.Subscription.Transport == LaharsubTransport.WebSocket), TestSupport.Timeout, "the socket opens");
        var requests = handler.Requests;

        var text = await reader.Subscription.PublishAsync(topic.TopicId, "over the socket").WaitAsync(TestSupport.Timeout);
        byte[] binary = [0xff, 0x00, 0xfe, 0x80];
        var bytes = await reader.Subscription.PublishAsync(topic.TopicId, binary, "application/octet-stream").WaitAsync(TestSupport.Timeout);
        var conditional = await reader.Subscription.PublishAsync(topic.TopicId, TestSupport.Utf8("{\"n\":3}"), "application/json",
            new PublishOptions { ExpectedEpoch = topic.Epoch }).WaitAsync(TestSupport.Timeout);
        var events = (await reader.TakeAsync(3)).Cast<LaharsubMessage>().ToList();

        Assert.Equal(requests, handler.Requests);
        Assert.Equal(new PublishedMessage(topic.TopicId, 1) { Epoch = topic.Epoch }, text);
        Assert.Equal((2L, 3L), (bytes.MessageId, conditional.MessageId));
        Assert.Equal(("over the socket", "text/plain; charset=utf-8"), (events[0].GetString(), events[0].ContentType));
        Assert.Equal(binary, events[1].Body.ToArray());
        Assert.Equal(("application/octet-stream", "application/json"), (events[1].ContentType, events[2].ContentType));
        Assert.Equal("{\"n\":3}", events[2].GetString());
    }

    [Fact]
    public async Task APublishRefusedOnTheWebSocketThrowsWhatTheHttpPublishThrows()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessageBytes = 10);
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options(transport: LaharsubTransport.WebSocket));
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(topic.TopicId, 1)]));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(reader.Subscription.Transport == LaharsubTransport.WebSocket), TestSupport.Timeout, "the socket opens");
        var requests = handler.Requests;

        var unknown = await Assert.ThrowsAsync<LaharsubException>(() => reader.Subscription.PublishAsync(999, "nobody").WaitAsync(TestSupport.Timeout));
        var tooLarge = await Assert.ThrowsAsync<LaharsubException>(() => reader.Subscription.PublishAsync(topic.TopicId, "more than ten bytes").WaitAsync(TestSupport.Timeout));
        var mismatch = await Assert.ThrowsAsync<EpochMismatchException>(() => reader.Subscription.PublishAsync(topic.TopicId, TestSupport.Utf8("x"), "text/plain",
            new PublishOptions { ExpectedEpoch = "0123456789abcdef" }).WaitAsync(TestSupport.Timeout));
        Assert.Equal(requests, handler.Requests);
        var overHttp = await Assert.ThrowsAsync<LaharsubException>(() => client.PublishAsync(999, "nobody").WaitAsync(TestSupport.Timeout));

        Assert.Equal((HttpStatusCode.NotFound, overHttp.Title, overHttp.Detail, 999L), (unknown.StatusCode, unknown.Title, unknown.Detail, unknown.TopicId));
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, tooLarge.StatusCode);
        Assert.Contains("MaxMessageBytes", tooLarge.Detail);
        Assert.Equal((HttpStatusCode.PreconditionFailed, topic.TopicId, "0123456789abcdef"), (mismatch.StatusCode, mismatch.TopicId, mismatch.ExpectedEpoch));
        // Nothing was stored, and the socket goes on.
        await client.PublishAsync(topic.TopicId, "fine").WaitAsync(TestSupport.Timeout);
        var message = Assert.IsType<LaharsubMessage>(await reader.NextAsync());
        Assert.Equal((1L, "fine"), (message.MessageId, message.GetString()));
    }

    [Theory]
    [InlineData(LaharsubTransport.ServerSentEvents)]
    [InlineData(LaharsubTransport.LongPolling)]
    public async Task WithoutAWebSocketTheSubscriptionPublishesOverHttp(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options(transport: transport));
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        await TransportTests.ListeningAsync(reader, server, topic, transport);
        var requests = handler.Requests;

        var published = await reader.Subscription.PublishAsync(topic, "over http").WaitAsync(TestSupport.Timeout);

        Assert.Equal(1, published.MessageId);
        Assert.Equal("over http", (await reader.NextAsync()).Text());
        // The publish, and for a long poll the poll it answered and the next one.
        Assert.InRange(handler.Requests - requests, 1, 3);
    }

    [Fact]
    public async Task AReaderSlowerThanItsWebSocketGetsEveryMessageOnceInOrder()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var options = TestSupport.Options(transport: LaharsubTransport.WebSocket);
        options.StreamQueueCapacity = 3;
        await using var client = new LaharsubClient(server.ApiAddress, options);
        var a = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var b = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 30; i++)
        {
            await client.PublishAsync(a, $"a{i}").WaitAsync(TestSupport.Timeout);
            await client.PublishAsync(b, $"b{i}").WaitAsync(TestSupport.Timeout);
        }
        await using var reader = new EventReader(client.Subscribe([new(a, 1), new(b, 1)]));

        // One event read; the socket receives the other 59 while nobody reads, and holds only 3.
        var events = new List<SubscriptionEvent> { await reader.NextAsync() };
        await Eventually.HoldsAsync(() => Task.FromResult(reader.Subscription.OverflowedEvents > 0), TestSupport.Timeout, "events overflow the socket's queue");
        events.AddRange(await reader.TakeAsync(59));

        Assert.Equal(Enumerable.Range(1, 30).Select(i => $"a{i}"), events.Where(e => e.TopicId == a).Select(e => e.Text()));
        Assert.Equal(Enumerable.Range(1, 30).Select(i => $"b{i}"), events.Where(e => e.TopicId == b).Select(e => e.Text()));
        Assert.Equal(new Dictionary<long, long> { [a] = 31, [b] = 31 }, reader.Subscription.Cursors.Froms());
        await reader.AssertQuietForAsync(TimeSpan.FromMilliseconds(300));
    }

    [Theory]
    [InlineData(LaharsubTransport.WebSocket)]
    [InlineData(LaharsubTransport.ServerSentEvents)]
    public async Task AStreamCarriesTheTokenInAuthorizationAndRefreshesItOnceAfterA401(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        var topic = await CreateTopicAsync(server);
        var provider = new TokenSequence(Expired(Everything), TestTokens.Grant(Everything));
        var options = TestSupport.Options(transport: transport);
        options.AccessTokenProvider = provider.NextAsync;
        await using var client = new LaharsubClient(server.ApiAddress, options);

        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(reader.Subscription.Transport == transport), TestSupport.Timeout, "the stream starts");
        await client.PublishAsync(topic, "through").WaitAsync(TestSupport.Timeout);

        Assert.Equal("through", (await reader.NextAsync()).Text());
        // The stream's request with the expired token, once more after its 401, then the publish.
        Assert.Equal(3, provider.Calls);
    }

    [Theory]
    [InlineData(LaharsubTransport.Auto)]
    [InlineData(LaharsubTransport.ServerSentEvents)]
    public async Task AStreamOfAForbiddenTopicEndsNamingItWithoutRetryingOrFallingBack(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        var allowed = await CreateTopicAsync(server);
        var forbidden = await CreateTopicAsync(server);
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        var options = TestSupport.Options(transport: transport);
        options.AccessTokenProvider = _ => ValueTask.FromResult<string?>(TestTokens.Grant($$"""{"subscribe":["{{allowed}}"]}"""));
        await using var client = new LaharsubClient(http, options);

        await using var reader = new EventReader(client.Subscribe([new(allowed, 1), new(forbidden, 1)]));
        var denied = await Assert.ThrowsAsync<LaharsubAccessDeniedException>(() => reader.PendingStep.WaitAsync(TestSupport.Timeout));

        Assert.Equal((forbidden, "subscribe"), (denied.TopicId, denied.Operation));
        Assert.Equal(1, handler.Requests);
    }

    [Fact]
    public async Task AWebSocketSubscriptionAskingForAForbiddenTopicWhileRunningEndsNamingIt()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        var allowed = await CreateTopicAsync(server);
        var forbidden = await CreateTopicAsync(server);
        var options = TestSupport.Options(transport: LaharsubTransport.WebSocket);
        options.AccessTokenProvider = _ => ValueTask.FromResult<string?>(TestTokens.Grant($$"""{"subscribe":["{{allowed}}"]}"""));
        await using var client = new LaharsubClient(server.ApiAddress, options);
        await using var reader = new EventReader(client.Subscribe([new(allowed, 1)]));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(reader.Subscription.Transport == LaharsubTransport.WebSocket), TestSupport.Timeout, "the socket opens");

        reader.Subscription.Add(forbidden, 1);
        var denied = await Assert.ThrowsAsync<LaharsubAccessDeniedException>(() => reader.PendingStep.WaitAsync(TestSupport.Timeout));

        // (The server's problem frame names the topic but, unlike its HTTP 403, not the operation.)
        Assert.Equal((HttpStatusCode.Forbidden, forbidden), (denied.StatusCode, denied.TopicId));
        Assert.Contains("subscribe", denied.Detail);
    }

    [Fact]
    public async Task AnEventStreamThatFallsSilentIsOpenedAgainOnTheClientsClock()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var clock = new WatchedClock();
        var options = TestSupport.Options(transport: LaharsubTransport.ServerSentEvents);
        options.TimeProvider = clock;
        await using var client = new LaharsubClient(server.ApiAddress, options);
        var topic = (await server.Store.CreateTopicAsync().AsTask().WaitAsync(TestSupport.Timeout))!.TopicId;
        await using var subscription = client.Subscribe([new(topic, 1)]);
        var retries = Channel.CreateUnbounded<RetryingEventArgs>();
        subscription.Retrying += (_, retry) => retries.Writer.TryWrite(retry);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(subscription.Transport == LaharsubTransport.ServerSentEvents), TestSupport.Timeout, "the stream starts");

        // Nothing, not even a heartbeat (the server's come every 15 s of real time), for PollTimeout + RequestTimeout of the client's clock.
        var silence = options.PollTimeout + options.RequestTimeout;
        await clock.NextArmedAsync(due => due == silence);
        clock.Advance(silence);
        var retry = await retries.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        await server.Store.PublishAsync(topic, TestSupport.Utf8("after the silence"), "text/plain");
        var next = reader.NextAsync();
        // The backoff before the stream is opened again runs on the same clock.
        await clock.AdvanceThroughWaitsAsync(next, due => due < TimeSpan.FromSeconds(1));

        Assert.IsType<TimeoutException>(retry.Error);
        Assert.Equal("after the silence", (await next).Text());
        Assert.Equal(LaharsubTransport.ServerSentEvents, subscription.Transport);
    }

    [Fact]
    public async Task AWebSocketWhoseServerDoesNotAnswerATopicChangeIsOpenedAgainWithTheChangeOnTheClientsClock()
    {
        await using var server = await DeafSocketServer.StartAsync();
        var clock = new WatchedClock();
        var options = TestSupport.Options(transport: LaharsubTransport.WebSocket);
        options.TimeProvider = clock;
        await using var client = new LaharsubClient(server.ApiAddress, options);
        await using var subscription = client.Subscribe([new(1, 1)]);
        var retries = Channel.CreateUnbounded<RetryingEventArgs>();
        subscription.Retrying += (_, retry) => retries.Writer.TryWrite(retry);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;
        var first = await server.Connections.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        await Eventually.HoldsAsync(() => Task.FromResult(subscription.Transport == LaharsubTransport.WebSocket), TestSupport.Timeout, "the socket starts");

        subscription.Add(2, 1);
        var frame = await server.Frames.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        // The change waits RequestTimeout on the client's clock for its answer; then a short backoff.
        var second = server.Connections.Reader.ReadAsync().AsTask();
        await clock.AdvanceThroughWaitsAsync(second, due => due <= options.RequestTimeout);
        var retry = await retries.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Equal("?topics=1:1&timeout=0", first);
        Assert.Contains("\"type\":\"subscribe\"", frame);
        Assert.Contains("\"topics\":\"2:1\"", frame);
        Assert.IsType<TimeoutException>(retry.Error);
        // Opened again from the cursors, the topic added included.
        Assert.Equal("?topics=1:1,2:1&timeout=0", await second);
    }

    [Fact]
    public async Task AWebSocketWhoseServerStopsReadingIsGivenUpAsTimedOutWhenAFrameCannotBeSent()
    {
        await using var server = await DeafSocketServer.StartAsync(readsFrames: false);
        var clock = new WatchedClock();
        var options = TestSupport.Options(transport: LaharsubTransport.WebSocket);
        options.TimeProvider = clock;
        await using var client = new LaharsubClient(server.ApiAddress, options);
        await using var subscription = client.Subscribe([new(1, 1)]);
        var retries = Channel.CreateUnbounded<RetryingEventArgs>();
        subscription.Retrying += (_, retry) => retries.Writer.TryWrite(retry);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;
        await server.Connections.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        await Eventually.HoldsAsync(() => Task.FromResult(subscription.Transport == LaharsubTransport.WebSocket), TestSupport.Timeout, "the socket starts");

        // Far more than loopback's socket buffers hold, so the send blocks until RequestTimeout gives it up.
        using var giveUp = new CancellationTokenSource();
        var publish = subscription.PublishAsync(1, Encoding.UTF8.GetBytes(new string('x', 64 << 20)), "text/plain", options: null, giveUp.Token);
        var retry = retries.Reader.ReadAsync().AsTask();
        await clock.AdvanceThroughWaitsAsync(retry, due => due <= options.RequestTimeout);

        // The reader is told why, not handed the bare cancellation of the aborted socket.
        var error = Assert.IsType<TimeoutException>((await retry).Error);
        Assert.Contains("did not take a frame", error.Message);
        // The publish timed out on the socket, or went on over HTTP (which this server does not serve) until given up.
        await giveUp.CancelAsync();
        var published = await Record.ExceptionAsync(() => publish.WaitAsync(TestSupport.Timeout));
        Assert.True(published is TimeoutException or OperationCanceledException, $"The publish ended with {published?.ToString() ?? "success"}.");
    }

    /// <summary>Tokens the provider hands out in turn; the last one repeats.</summary>
    private sealed class TokenSequence(params string?[] tokens)
    {
        private int _calls;

        public int Calls => Volatile.Read(ref _calls);

        public ValueTask<string?> NextAsync(CancellationToken cancellationToken)
        {
            var call = Interlocked.Increment(ref _calls);
            return ValueTask.FromResult(tokens[Math.Min(call, tokens.Length) - 1]);
        }
    }

    private static string Expired(string claim)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        return TestTokens.Hs256(TestTokens.Payload(claim).With("exp", now - 3600).With("nbf", now - 7200));
    }

    private static async Task<long> CreateTopicAsync(LaharsubTestServer server)
    {
        var options = TestSupport.Options();
        options.AccessTokenProvider = _ => ValueTask.FromResult<string?>(TestTokens.Grant(Everything, "admin"));
        await using var admin = new LaharsubClient(server.ApiAddress, options);
        return await admin.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
    }
}
