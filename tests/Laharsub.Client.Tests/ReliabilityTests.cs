using System.Diagnostics;
using System.Net;
using Laharsub.Server.Delivery;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Client.Tests;

public sealed class ReliabilityTests
{
    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task AfterARestartThatKeptTheDataTheSubscriptionReconnectsAndReportsWhatExpiredMeanwhile(PollFormat format)
    {
        // A clock the test moves: messages expire when it says so, not when a busy machine gets slow.
        var clock = new FakeTimeProvider();
        await using var first = await LaharsubTestServer.StartAsync(o => o.MessageTimeToLive = TimeSpan.FromSeconds(2),
            s => s.AddSingleton<TimeProvider>(clock));
        var backend = first.Store;
        var keepData = LaharsubTestServer.KeepData(first);
        await using var client = first.CreateLaharsubClient(format);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe());
        await reader.Subscription.AddAsync(topic).WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "before").WaitAsync(TestSupport.Timeout);
        Assert.Equal("before", (await reader.NextAsync()).Text());
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(first.WaitingPolls(topic) == 1), TestSupport.Timeout, "the poll waits");

        await first.StopAsync();
        // Published and expired while no server answers: this subscriber can never read them.
        await backend.PublishAsync(topic, TestSupport.Utf8("lost 2"), "text/plain");
        await backend.PublishAsync(topic, TestSupport.Utf8("lost 3"), "text/plain");
        clock.Advance(TimeSpan.FromSeconds(3));
        Assert.Equal(0, (await backend.GetTopicAsync(topic))!.RetainedMessages);
        // The second server keeps the first one's backend, and with it its options and clock.
        await using var second = await LaharsubTestServer.StartAsync(
            services: keepData,
            port: first.BaseAddress.Port);
        await client.PublishAsync(topic, "after").WaitAsync(TestSupport.Timeout);

        var gap = Assert.IsType<GapNotice>(await reader.NextAsync());
        var after = Assert.IsType<LaharsubMessage>(await reader.NextAsync());
        Assert.Equal((topic, 2L, 3L), (gap.TopicId, gap.FromMessageId, gap.ToMessageId));
        Assert.Equal((4L, "after"), (after.MessageId, after.GetString()));
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task AfterARestartThatLostTheDataTheSubscriptionIsResetOrToldTheTopicIsGone(PollFormat format)
    {
        await using var first = await LaharsubTestServer.StartAsync();
        await using var client = first.CreateLaharsubClient(format);
        var recreated = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var vanished = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 3; i++)
        {
            await client.PublishAsync(recreated, $"old {i}").WaitAsync(TestSupport.Timeout);
        }
        await using var reader = new EventReader(client.Subscribe([new(recreated, 1), new(vanished, 1)]));
        Assert.Equal(["old 1", "old 2", "old 3"], (await reader.TakeAsync(3)).Select(e => e.Text()));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(first.WaitingPolls(recreated) == 1), TestSupport.Timeout, "the poll waits");

        await first.StopAsync();
        // A server without persistence comes back with only what was created since: topic 1 again, with one message.
        var signals = new TopicSignals();
        using var fresh = new InMemoryStore(Options.Create(new LaharsubStoreOptions()), signals, TimeProvider.System);
        Assert.Equal(recreated, (await fresh.CreateTopicAsync())!.TopicId);
        await fresh.PublishAsync(recreated, TestSupport.Utf8("new 1"), "text/plain");
        await using var second = await LaharsubTestServer.StartAsync(
            services: s => { s.AddSingleton<ILaharsubStore>(fresh); s.AddSingleton(signals); },
            port: first.BaseAddress.Port);

        var events = await reader.TakeAsync(3);

        var notFound = Assert.IsType<TopicNotFoundNotice>(events[0]);
        var reset = Assert.IsType<ResetNotice>(events[1]);
        var message = Assert.IsType<LaharsubMessage>(events[2]);
        Assert.Equal(vanished, notFound.TopicId);
        Assert.Equal((recreated, 4L, 1L, 1L), (reset.TopicId, reset.RequestedFrom, reset.FirstMessageId, reset.LastMessageId));
        Assert.Equal((1L, "new 1"), (message.MessageId, message.GetString()));
        Assert.Equal(new Dictionary<long, long> { [recreated] = 2 }, reader.Subscription.Cursors.Froms());
    }

    [Fact]
    public async Task CancellingAReadEndsItWithinASecondAndAbortsThePoll()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = new LaharsubClient(server.ApiAddress, TestSupport.Options(pollSeconds: 60));
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        using var cancellation = new CancellationTokenSource();
        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]), cancellation.Token);
        var step = reader.PendingStep;
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(topic)).WaitingPolls == 1, TestSupport.Timeout, "the poll waits");

        var stopwatch = Stopwatch.StartNew();
        cancellation.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => step.WaitAsync(TestSupport.Timeout));
        stopwatch.Stop();

        Assert.InRange(stopwatch.Elapsed, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(topic)).WaitingPolls == 0, TestSupport.Timeout, "the server sees the poll go");
    }

    [Fact]
    public async Task DisposingASubscriptionEndsItsReadAndAbortsThePoll()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = new LaharsubClient(server.ApiAddress, TestSupport.Options(pollSeconds: 60));
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(topic, 1)]);
        await using var events = subscription.ReadAllAsync().GetAsyncEnumerator();
        var step = events.MoveNextAsync().AsTask();
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(topic)).WaitingPolls == 1, TestSupport.Timeout, "the poll waits");

        await subscription.DisposeAsync();

        Assert.False(await step.WaitAsync(TimeSpan.FromSeconds(1)));
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(topic)).WaitingPolls == 0, TestSupport.Timeout, "the server sees the poll go");
    }

    [Fact]
    public async Task DisposingTheClientEndsItsSubscriptions()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var client = new LaharsubClient(server.ApiAddress, TestSupport.Options(pollSeconds: 60));
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var events = client.Subscribe([new(topic, 1)]).ReadAllAsync().GetAsyncEnumerator();
        var step = events.MoveNextAsync().AsTask();
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), TestSupport.Timeout, "the poll waits");

        await client.DisposeAsync();

        Assert.False(await step.WaitAsync(TimeSpan.FromSeconds(1)));
        await Assert.ThrowsAsync<ObjectDisposedException>(() => client.CreateTopicAsync().WaitAsync(TestSupport.Timeout));
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 0), TestSupport.Timeout, "the server sees the poll go");
    }

    [Fact]
    public async Task PollsHeldForTheirWholeTimeoutEndAsEmptyAnswersNotClientTimeouts()
    {
        // One clock for the server's hold and the client's time limits, moved by the test: no waiting out
        // the hold, and a busy machine cannot turn a 204 into a client timeout.
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock));
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        // The request timeout is below the hold time, so a client that forgot to add the two would see
        // only timeouts: moving the clock by the hold time would pass its limit first.
        var options = TestSupport.Options(pollSeconds: 2);
        options.RequestTimeout = TimeSpan.FromSeconds(1);
        options.TimeProvider = clock;
        await using var client = new LaharsubClient(http, options);
        var topic = (await server.Store.CreateTopicAsync().AsTask().WaitAsync(TestSupport.Timeout))!.TopicId;
        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        _ = reader.PendingStep;

        for (var ended = 0; ended < 2; ended++)
        {
            // The server lets go of a poll before answering it, so one waiting now is the next one.
            await Eventually.HoldsAsync(() => Task.FromResult(handler.EmptyPolls == ended && server.WaitingPolls(topic) == 1), TestSupport.Timeout, "the next poll waits");
            clock.Advance(options.PollTimeout);
        }
        await Eventually.HoldsAsync(() => Task.FromResult(handler.EmptyPolls >= 2), TestSupport.Timeout, "two polls end empty");
        await client.PublishAsync(topic, "still listening").WaitAsync(TestSupport.Timeout);

        Assert.Equal("still listening", (await reader.NextAsync()).Text());
    }

    [Fact]
    public void AGivenHttpClientsTimeoutLowersThePollHoldTimeBelowIt()
    {
        using var http = new HttpClient { BaseAddress = new Uri("http://127.0.0.1:1/ps/") };
        var options = new LaharsubClientOptions { PollTimeout = TimeSpan.FromSeconds(120) };

        using var client = new LaharsubClient(http, options);
        using var unbounded = new HttpClient { BaseAddress = http.BaseAddress, Timeout = Timeout.InfiniteTimeSpan };
        using var unboundedClient = new LaharsubClient(unbounded, options);

        Assert.Equal(TimeSpan.FromSeconds(90), client.PollTimeout);
        Assert.Equal(TimeSpan.FromSeconds(120), unboundedClient.PollTimeout);
    }

    [Fact]
    public async Task PublishingRetriesWhileTheServerRestartsAndStoresTheMessageOnce()
    {
        await using var first = await LaharsubTestServer.StartAsync();
        var keepData = LaharsubTestServer.KeepData(first);
        var options = TestSupport.Options();
        options.MaxRequestAttempts = 100;
        await using var client = new LaharsubClient(first.ApiAddress, options);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await first.StopAsync();

        var publishing = client.PublishAsync(topic, "through the restart");
        await using var second = await LaharsubTestServer.StartAsync(
            services: keepData,
            port: first.BaseAddress.Port);
        var published = await publishing.WaitAsync(TestSupport.Timeout);

        Assert.Equal(1, published.MessageId);
        Assert.Equal(1, (await client.GetTopicAsync(topic).WaitAsync(TestSupport.Timeout)).LastMessageId);
    }

    [Fact]
    public async Task ASubscriptionThatCannotReachTheServerSaysWhyBeforeEachRetry()
    {
        Uri address;
        await using (var gone = await LaharsubTestServer.StartAsync())
        {
            address = gone.ApiAddress;
        }
        var options = TestSupport.Options();
        await using var client = new LaharsubClient(address, options);
        await using var subscription = client.Subscribe([new(1, 1)]);
        var retries = System.Threading.Channels.Channel.CreateUnbounded<(object? Sender, Exception Error, TimeSpan Delay)>();
        subscription.Retrying += (sender, retry) => retries.Writer.TryWrite((sender, retry.Error, retry.Delay));
        using var stop = new CancellationTokenSource();
        var reading = Task.Run(async () =>
        {
            await foreach (var _ in subscription.ReadAllAsync(stop.Token))
            {
            }
        });

        var first = await retries.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        var second = await retries.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Same(subscription, first.Sender);
        Assert.IsType<HttpRequestException>(first.Error);
        Assert.IsType<HttpRequestException>(second.Error);
        Assert.InRange(first.Delay, TimeSpan.Zero, options.MaxRetryDelay);
        await stop.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reading.WaitAsync(TestSupport.Timeout));
    }

    [Fact]
    public async Task AFullServerIsRetriedNoSoonerThanItsRetryAfter()
    {
        // One clock for the server (when the message expires, the Retry-After it sends) and the client
        // (how long it waits): the test moves it once the client waits, so nothing sleeps and a busy
        // machine cannot let the message expire early.
        var clock = new WatchedClock();
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            // Room for one 10-byte message (670 bytes with its encodings and overhead) and the idempotency keys
            // of two publishes (about 450 bytes each, kept for minutes), not for two messages.
            o.MaxRetainedBytes = 1700;
            o.MaxMessageBytes = 10;
            o.MessageTimeToLive = TimeSpan.FromSeconds(1.5);
        }, s => s.AddSingleton<TimeProvider>(clock));
        var options = TestSupport.Options();
        options.TimeProvider = clock;
        await using var client = new LaharsubClient(server.ApiAddress, options);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "0123456789").WaitAsync(TestSupport.Timeout);

        var started = clock.GetUtcNow();
        var publishing = client.PublishAsync(topic, "full?");
        // Each retry wait the client arms is let pass; the time limits of its requests (RequestTimeout) never are.
        await clock.AdvanceThroughWaitsAsync(publishing, wait => wait < options.RequestTimeout);
        var published = await publishing.WaitAsync(TestSupport.Timeout);

        // The server answered 507 with Retry-After (when the first message expires, 2 s rounded up); the client's own backoff would retry after 50-300 ms.
        Assert.InRange(clock.GetUtcNow() - started, TimeSpan.FromSeconds(0.95), TestSupport.Timeout);
        Assert.Equal(2, published.MessageId);
    }
}
