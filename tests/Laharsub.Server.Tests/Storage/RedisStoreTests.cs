using Microsoft.Extensions.DependencyInjection;
using System.Diagnostics;
using System.Text;
using Laharsub.Server.Delivery;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Laharsub.Testing;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Tests.Storage;

/// <summary>What only the Redis store has: instances that share topics, and a Redis that goes away.</summary>
public sealed class RedisStoreTests : IAsyncLifetime
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);
    private readonly List<RedisStoreHandle> _stores = [];

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        foreach (var store in _stores)
        {
            await store.DisposeAsync();
        }
    }

    /// <summary>A Redis store as an application gets it (AddRedis), telling clients to retry after 3 s while Redis is down.</summary>
    private ILaharsubStore Instance(string configuration, string prefix, TopicSignals signals, LaharsubOptions? options = null)
    {
        var handle = RedisStores.Create(configuration, prefix, (options ?? new LaharsubOptions()).Store, signals,
            redis => redis.RetryAfter = TimeSpan.FromSeconds(3));
        _stores.Add(handle);
        return handle.Store;
    }

    /// <summary>Two instances sharing one Redis: a topic created at A, and a poll for it that waits at B.</summary>
    private async Task<(ILaharsubStore A, TopicInfo Topic, Task<PollResult> PollAtB)> PollWaitingAtBAsync(CancellationToken cancellationToken)
    {
        var redis = await SharedRedis.GetAsync();
        var prefix = SharedRedis.UniquePrefix();
        var signalsB = new TopicSignals();
        var a = Instance(redis.Configuration, prefix, new TopicSignals());
        var b = Instance(redis.Configuration, prefix, signalsB);
        var pollerB = new SubscriptionRunner(b, signalsB, Options.Create(new LaharsubDeliveryOptions()));
        var topic = (await a.CreateTopicAsync(cancellationToken: cancellationToken))!;
        var poll = pollerB.PollAsync([new Subscription(topic.TopicId, 1)], answerBytes: null, SubscriptionWait.Until(cancellationToken)).AsTask();
        await Eventually.HoldsAsync(() => Task.FromResult(signalsB.WaitingOn(topic.TopicId) == 1), Bound, "the poll waits on B");
        // A poll registers before its first read, so it can count as waiting while that read is still
        // on its way to Redis; a delete that overtook the read would be answered 'no such topic'
        // instead of the notice under test. A round trip on B's connection after the read was sent
        // makes Redis run the read first.
        await b.GetTopicAsync(topic.TopicId, cancellationToken);
        return (a, topic, poll);
    }

    /// <summary>A traced message's entry holds the publish's traceparent after byte 0x1E (RedisScripts' remarks), counted against MaxRetainedBytes.</summary>
    [Fact]
    public async Task ATracedMessageCountsItsStoredTraceparentInTheRetainedBytes()
    {
        var redis = await SharedRedis.GetAsync();
        var store = Instance(redis.Configuration, SharedRedis.UniquePrefix(), new TopicSignals());
        var topic = (await store.CreateTopicAsync().AsTask().WaitAsync(Bound))!;
        using var source = new ActivitySource($"redis-test-{Guid.NewGuid():N}");
        using var listener = new ActivityListener
        {
            ShouldListenTo = candidate => candidate == source,
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
        };
        ActivitySource.AddActivityListener(listener);
        Activity.Current = null;

        await store.PublishAsync(topic.TopicId, "same body"u8.ToArray(), "text/plain").AsTask().WaitAsync(Bound);
        var untraced = (await store.GetStatisticsAsync()).RetainedBytes;
        using (source.StartActivity("publish"))
        {
            await store.PublishAsync(topic.TopicId, "same body"u8.ToArray(), "text/plain").AsTask().WaitAsync(Bound);
        }
        var both = (await store.GetStatisticsAsync()).RetainedBytes;

        // "\x1E" and "00-" + 32 + "-" + 16 + "-" + 2 hex digits.
        Assert.Equal(untraced + 1 + 55, both - untraced);
        Assert.Equal(18, (await store.GetTopicAsync(topic.TopicId))!.RetainedBytes);
    }

    [Fact]
    public async Task APublishOnOneInstanceWakesAPollOnAnother()
    {
        using var timeout = new CancellationTokenSource(Bound);
        var (a, topic, poll) = await PollWaitingAtBAsync(timeout.Token);
        await a.PublishAsync(topic.TopicId, Encoding.UTF8.GetBytes("from A"), "text/plain");

        var result = await poll.WaitAsync(Bound);
        Assert.Equal("from A", Encoding.UTF8.GetString(Assert.Single(result.Messages).Body.Span));
    }

    [Fact]
    public async Task ADeleteOnOneInstanceWakesAPollOnAnother()
    {
        using var timeout = new CancellationTokenSource(Bound);
        var (a, topic, poll) = await PollWaitingAtBAsync(timeout.Token);
        await a.DeleteTopicAsync(topic.TopicId);

        var notice = Assert.Single((await poll.WaitAsync(Bound)).Notices);
        Assert.Equal((PollNoticeKind.TopicDeleted, topic.Epoch), (notice.Kind, notice.Epoch));
    }

    [Fact]
    public async Task WhileRedisIsDownTheStoreSaysSoAndWhenItIsBackANewEpochTellsReadersTheDataWasLost()
    {
        await using var redis = await RedisServer.StartAsync();
        var signals = new TopicSignals();
        var store = Instance(redis.Configuration, "laharsub:", signals);
        var poller = new SubscriptionRunner(store, signals, Options.Create(new LaharsubDeliveryOptions()));
        var before = (await store.CreateTopicAsync())!;
        await store.PublishAsync(before.TopicId, Encoding.UTF8.GetBytes("before"), "text/plain");

        await redis.KillAsync();
        var down = await Assert.ThrowsAsync<LaharsubStoreUnavailableException>(
            async () => await store.PublishAsync(before.TopicId, Encoding.UTF8.GetBytes("lost?"), "text/plain").AsTask().WaitAsync(Bound));
        await using var restarted = await RedisServer.StartAsync(redis.Port);
        // The multiplexer reconnects by itself within a few seconds; no restart of Laharsub.
        TopicInfo? after = null;
        await Eventually.HoldsAsync(async () =>
        {
            try
            {
                after = await store.CreateTopicAsync();
                return true;
            }
            catch (LaharsubStoreUnavailableException)
            {
                return false;
            }
        }, Bound, "the store works again once Redis is back");
        await store.PublishAsync(after!.TopicId, Encoding.UTF8.GetBytes("new 1"), "text/plain");
        await store.PublishAsync(after.TopicId, Encoding.UTF8.GetBytes("new 2"), "text/plain");
        using var timeout = new CancellationTokenSource(Bound);
        var resumed = await poller.PollAsync([new Subscription(before.TopicId, 2, before.Epoch)], answerBytes: null, SubscriptionWait.Until(timeout.Token));

        Assert.Equal("Redis", down.StoreName);
        Assert.Contains("Laharsub:Redis:Configuration", down.Message);
        Assert.Equal(TimeSpan.FromSeconds(3), down.RetryAfter);
        // Redis without persistence lost everything: the id comes back as another incarnation, and the
        // reader that stood at message 2 is told, instead of silently skipping the new message 1.
        Assert.Equal(before.TopicId, after.TopicId);
        var reset = Assert.Single(resumed.Notices);
        Assert.Equal((PollNoticeKind.EpochReset, before.Epoch, after.Epoch), (reset.Kind, reset.RequestedEpoch, reset.Epoch));
        Assert.Equal(["new 1", "new 2"], resumed.Messages.Select(m => Encoding.UTF8.GetString(m.Body.Span)));
    }
}
