using System.Text;
using Laharsub.Server.Delivery;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Laharsub.Testing;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// What every store must do, checked through the poll assembly the server runs on top of it: written
/// once, run once per store by a subclass (<see cref="InMemoryStoreContractTests"/>, <see cref="RedisStoreContractTests"/>).
/// The store's own contract, checked on the store directly and runnable by a store in another package,
/// is the store specification (src/Server.Specification.Tests, <see cref="InMemoryStoreSpecificationTests"/>).
/// </summary>
public abstract class StoreContractTests : IAsyncLifetime
{
    protected static readonly TimeSpan Bound = TimeSpan.FromSeconds(15);
    private readonly List<object> _owned = [];

    /// <summary>
    /// A store over an empty data set, with these options, signalling <paramref name="signals"/>; what it
    /// must release after the test (the store, or what made it) it passes to <see cref="DisposeAfterTest"/>.
    /// </summary>
    private protected abstract Task<ILaharsubStore> CreateStoreAsync(LaharsubOptions options, TopicSignals signals);

    /// <summary>Disposes <paramref name="owned"/> (<see cref="IAsyncDisposable"/> or <see cref="IDisposable"/>) after the test.</summary>
    private protected void DisposeAfterTest(object owned) => _owned.Add(owned);

    /// <summary>A time to live that <see cref="LetRetentionPassAsync"/> can get past.</summary>
    protected abstract TimeSpan ShortTimeToLive { get; }

    /// <summary>Lets <paramref name="time"/> pass for the store (a fake clock where it can, the store's own clock where it cannot).</summary>
    protected abstract Task LetTimePassAsync(TimeSpan time);

    /// <summary>Lets <see cref="ShortTimeToLive"/> pass, and a little more.</summary>
    protected Task LetRetentionPassAsync() => LetTimePassAsync(ShortTimeToLive + ShortTimeToLive / 3);

    public Task InitializeAsync() => Task.CompletedTask;

    public async Task DisposeAsync()
    {
        foreach (var owned in _owned)
        {
            switch (owned)
            {
                case IAsyncDisposable asyncDisposable:
                    await asyncDisposable.DisposeAsync();
                    break;
                case IDisposable disposable:
                    disposable.Dispose();
                    break;
            }
        }
    }

    private protected sealed record Backend(ILaharsubStore Store, SubscriptionRunner Poller, TopicSignals Signals)
    {
        public async Task<long> CreateAsync() => (await Store.CreateTopicAsync().AsTask().WaitAsync(Bound))!.TopicId;

        public async Task<PublishResult> PublishAsync(long topic, string text, string? ifEpoch = null) =>
            await Store.PublishAsync(topic, Encoding.UTF8.GetBytes(text), "text/plain; charset=utf-8", ifEpoch).AsTask().WaitAsync(Bound);

        public async Task<PollResult> PollAsync(params Subscription[] subscriptions)
        {
            using var timeout = new CancellationTokenSource(Bound);
            return await Poller.PollAsync(subscriptions, answerBytes: null, SubscriptionWait.Until(timeout.Token));
        }

        public async Task<PollResult> PollAtOnceAsync(params Subscription[] subscriptions) =>
            await Poller.PollAsync(subscriptions, answerBytes: null, SubscriptionWait.Until(new CancellationToken(canceled: true))).AsTask().WaitAsync(Bound);

        public async Task<TopicInfo> InfoAsync(long topic) => (await Store.GetTopicAsync(topic).AsTask().WaitAsync(Bound))!;
    }

    private protected async Task<Backend> StartAsync(Action<LaharsubOptions>? configure = null)
    {
        var options = new LaharsubOptions();
        configure?.Invoke(options);
        var signals = new TopicSignals();
        var store = await CreateStoreAsync(options, signals);
        return new Backend(store, new SubscriptionRunner(store, signals, Options.Create(options.Delivery)), signals);
    }

    private static string[] Texts(PollResult result) => [.. result.Messages.Select(m => Encoding.UTF8.GetString(m.Body.Span))];

    [Fact]
    public async Task TopicIdsAreUniqueAndMessageIdsConsecutiveFromOne()
    {
        var backend = await StartAsync();
        long[] topics = [await backend.CreateAsync(), await backend.CreateAsync(), await backend.CreateAsync()];

        var ids = new List<long>();
        for (var i = 0; i < 5; i++)
        {
            ids.Add((await backend.PublishAsync(topics[1], $"m{i}")).MessageId);
        }

        Assert.Equal(3, topics.Distinct().Count());
        Assert.True(topics[0] < topics[1] && topics[1] < topics[2], "topic ids grow in creation order");
        Assert.Equal([1L, 2, 3, 4, 5], ids);
        var info = await backend.InfoAsync(topics[1]);
        Assert.Equal((5L, 1L, 5), (info.LastMessageId, info.FirstRetainedMessageId, info.RetainedMessages));
        Assert.Equal(0, (await backend.InfoAsync(topics[0])).LastMessageId);
    }

    [Fact]
    public async Task EveryIncarnationOfATopicHasItsOwnEpoch()
    {
        var backend = await StartAsync();
        var first = (await backend.Store.CreateTopicAsync())!;
        var second = (await backend.Store.CreateTopicAsync())!;

        var published = await backend.PublishAsync(first.TopicId, "x");

        Assert.False(string.IsNullOrEmpty(first.Epoch));
        Assert.NotEqual(first.Epoch, second.Epoch);
        Assert.Equal(first.Epoch, published.Epoch);
        Assert.Equal(first.Epoch, (await backend.InfoAsync(first.TopicId)).Epoch);
    }

    [Fact]
    public async Task ALabelGivenAtCreationIsKeptInInfoAndListings()
    {
        var backend = await StartAsync();
        var labelled = (await backend.Store.CreateTopicAsync("orders-eu").AsTask().WaitAsync(Bound))!;
        var plain = (await backend.Store.CreateTopicAsync().AsTask().WaitAsync(Bound))!;

        var listed = await backend.Store.ListTopicsAsync(0, 10).AsTask().WaitAsync(Bound);

        Assert.Equal("orders-eu", labelled.Label);
        Assert.Equal("orders-eu", (await backend.InfoAsync(labelled.TopicId)).Label);
        Assert.Null((await backend.InfoAsync(plain.TopicId)).Label);
        Assert.Equal(["orders-eu", null], listed.Select(topic => topic.Label));
    }

    [Fact]
    public async Task ConcurrentPublishersGetConsecutiveIdsWithoutHolesOrDuplicates()
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();

        var publishers = Enumerable.Range(0, 8).Select(p => Task.Run(async () =>
        {
            var ids = new List<long>();
            for (var i = 0; i < 50; i++)
            {
                ids.Add((await backend.PublishAsync(topic, $"{p}/{i}")).MessageId);
            }
            return ids;
        }));
        var all = (await Task.WhenAll(publishers).WaitAsync(Bound)).SelectMany(ids => ids).Order().ToArray();
        var read = await backend.PollAsync(new Subscription(topic, 1));

        Assert.Equal(Enumerable.Range(1, 400).Select(i => (long)i), all);
        Assert.Equal(Enumerable.Range(1, 400).Select(i => (long)i), read.Messages.Select(m => m.MessageId));
    }

    [Fact]
    public async Task MessagesComeBackByteForByteWithTheirContentTypeAndTime()
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();
        byte[] binary = [0, 10, 13, 255, (byte)'\n', 0];

        await backend.Store.PublishAsync(topic, binary, "application/octet-stream");
        await backend.PublishAsync(topic, "héllo\nworld");
        var result = await backend.PollAsync(new Subscription(topic, 1));

        Assert.Equal(binary, result.Messages[0].Body.ToArray());
        Assert.Equal("application/octet-stream", result.Messages[0].ContentType);
        Assert.Equal("héllo\nworld", Encoding.UTF8.GetString(result.Messages[1].Body.Span));
        Assert.Equal("text/plain; charset=utf-8", result.Messages[1].ContentType);
        Assert.NotEqual(default, result.Messages[0].PublishedAt);
        Assert.True(result.Messages[0].PublishedAt <= result.Messages[1].PublishedAt, "publish times follow the ids");
        Assert.All(result.Messages, m => Assert.Equal((topic, result.Messages[0].Epoch), (m.TopicId, m.Epoch)));
    }

    [Fact]
    public async Task TheOldestMessagesBeyondTheCountLimitAreDroppedAndAReaderBehindThemGetsAGap()
    {
        var backend = await StartAsync(o => o.MaxMessagesPerTopic = 3);
        var topic = await backend.CreateAsync();
        for (var i = 1; i <= 5; i++)
        {
            await backend.PublishAsync(topic, $"m{i}");
        }

        var result = await backend.PollAsync(new Subscription(topic, 1));

        var gap = Assert.Single(result.Notices);
        Assert.Equal((PollNoticeKind.Gap, 1L, 2L), (gap.Kind, gap.FromMessageId, gap.ToMessageId));
        Assert.Equal(["m3", "m4", "m5"], Texts(result));
        Assert.Equal((3L, 3), ((await backend.InfoAsync(topic)).FirstRetainedMessageId, (await backend.InfoAsync(topic)).RetainedMessages));
    }

    [Fact]
    public async Task ExpiredMessagesAreDroppedAndAReaderBehindThemGetsAGap()
    {
        var backend = await StartAsync(o => o.MessageTimeToLive = ShortTimeToLive);
        var topic = await backend.CreateAsync();
        await backend.PublishAsync(topic, "old 1");
        await backend.PublishAsync(topic, "old 2");

        await LetRetentionPassAsync();
        await backend.PublishAsync(topic, "new");
        var result = await backend.PollAsync(new Subscription(topic, 1));

        var gap = Assert.Single(result.Notices);
        Assert.Equal((PollNoticeKind.Gap, 1L, 2L), (gap.Kind, gap.FromMessageId, gap.ToMessageId));
        Assert.Equal(["new"], Texts(result));
    }

    [Fact]
    public async Task ACursorBeyondTheEndGetsAResetAndTheRetainedMessages()
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();
        await backend.PublishAsync(topic, "one");
        await backend.PublishAsync(topic, "two");

        var result = await backend.PollAsync(new Subscription(topic, 9));

        var reset = Assert.Single(result.Notices);
        Assert.Equal((PollNoticeKind.Reset, 9L, 2L, 1L), (reset.Kind, reset.FromMessageId, reset.ToMessageId, reset.FirstMessageId));
        Assert.Equal(["one", "two"], Texts(result));
    }

    [Theory]
    [InlineData(long.MaxValue)]
    [InlineData(4294967298L)]
    public async Task ACursorFarBeyondTheEndGetsAResetNotAnError(long from)
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();
        await backend.PublishAsync(topic, "one");
        await backend.PublishAsync(topic, "two");

        var result = await backend.PollAsync(new Subscription(topic, from));

        var reset = Assert.Single(result.Notices);
        Assert.Equal((PollNoticeKind.Reset, from, 1L), (reset.Kind, reset.FromMessageId, reset.FirstMessageId));
        Assert.Equal(["one", "two"], Texts(result));
    }

    [Theory]
    [InlineData(long.MaxValue)]
    [InlineData(long.MaxValue - 1)]
    [InlineData(2L)]
    public async Task ListingAfterTheLastTopicIsAnEmptyPage(long after)
    {
        var backend = await StartAsync();
        await backend.CreateAsync();
        await backend.CreateAsync();

        var page = await backend.Store.ListTopicsAsync(after, 10).AsTask().WaitAsync(Bound);

        Assert.Empty(page);
    }

    [Fact]
    public async Task AnotherEpochGetsAResetNamingBothEpochsAndTheNewIncarnationsMessages()
    {
        var backend = await StartAsync();
        var topic = (await backend.Store.CreateTopicAsync())!;
        await backend.PublishAsync(topic.TopicId, "one");
        await backend.PublishAsync(topic.TopicId, "two");

        // The cursor is inside the topic's range: without the epoch this poll would skip "one" silently.
        var result = await backend.PollAsync(new Subscription(topic.TopicId, 2, "0123456789abcdef"));
        var same = await backend.PollAsync(new Subscription(topic.TopicId, 2, topic.Epoch));

        var reset = Assert.Single(result.Notices);
        Assert.Equal((PollNoticeKind.EpochReset, topic.Epoch, "0123456789abcdef", 1L), (reset.Kind, reset.Epoch, reset.RequestedEpoch, reset.FirstMessageId));
        Assert.Equal(["one", "two"], Texts(result));
        Assert.Empty(same.Notices);
        Assert.Equal(["two"], Texts(same));
    }

    [Fact]
    public async Task PublishingToAnotherEpochIsRefusedAndStoresNothing()
    {
        var backend = await StartAsync();
        var topic = (await backend.Store.CreateTopicAsync())!;

        var refused = await backend.PublishAsync(topic.TopicId, "x", ifEpoch: "0123456789abcdef");
        var accepted = await backend.PublishAsync(topic.TopicId, "y", ifEpoch: topic.Epoch);

        Assert.Equal((PublishStatus.EpochMismatch, topic.Epoch), (refused.Status, refused.Epoch));
        Assert.Equal((PublishStatus.Published, 1L), (accepted.Status, accepted.MessageId));
    }

    [Fact]
    public async Task APollAfterAnotherKnowsOnlyItsOwnTopics()
    {
        // The assembler reuses a finished poll's state for the next poll of as many topics: nothing of the
        // first (its cursor, the epoch it followed) may reach the second.
        var backend = await StartAsync();
        var first = await backend.CreateAsync();
        var second = await backend.CreateAsync();
        await backend.PublishAsync(first, "a1");
        await backend.PublishAsync(first, "a2");

        var fromFirst = await backend.PollAsync(new Subscription(first, 2));
        var fromSecond = await backend.PollAtOnceAsync(new Subscription(second, 1));
        await backend.PublishAsync(second, "b1");
        var again = await backend.PollAsync(new Subscription(second, 1));

        Assert.Equal(["a2"], Texts(fromFirst));
        Assert.Equal((0, 0), (fromSecond.Messages.Count, fromSecond.Notices.Count));
        Assert.Equal(["b1"], Texts(again));
        Assert.Empty(again.Notices);
    }

    [Fact]
    public async Task AWaitingPollIsWokenByAPublish()
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();
        var poll = backend.PollAsync(new Subscription(topic, 1));
        await WaitUntilWaitingAsync(backend, topic, 1);

        await backend.PublishAsync(topic, "wake");

        Assert.Equal(["wake"], Texts(await poll));
        Assert.Equal(0, backend.Signals.WaitingOn(topic));
    }

    [Fact]
    public async Task AWaitingPollIsWokenByADeleteAndToldTheTopicIsGone()
    {
        var backend = await StartAsync();
        var topic = (await backend.Store.CreateTopicAsync())!;
        var poll = backend.PollAsync(new Subscription(topic.TopicId, 1));
        await WaitUntilWaitingAsync(backend, topic.TopicId, 1);

        Assert.True(await backend.Store.DeleteTopicAsync(topic.TopicId));

        var deleted = Assert.Single((await poll).Notices);
        Assert.Equal((PollNoticeKind.TopicDeleted, topic.TopicId, topic.Epoch), (deleted.Kind, deleted.TopicId, deleted.Epoch));
        Assert.Null(await backend.Store.GetTopicAsync(topic.TopicId));
        Assert.False(await backend.Store.DeleteTopicAsync(topic.TopicId));
        Assert.Equal(PublishStatus.TopicNotFound, (await backend.PublishAsync(topic.TopicId, "late")).Status);
    }

    [Fact]
    public async Task AMultiTopicPollWakesOnAnyOfItsTopicsAndLeavesTheOthers()
    {
        var backend = await StartAsync();
        long[] topics = [await backend.CreateAsync(), await backend.CreateAsync(), await backend.CreateAsync()];
        var poll = backend.PollAsync([.. topics.Select(t => new Subscription(t, 1))]);
        await WaitUntilWaitingAsync(backend, topics[2], 1);

        await backend.PublishAsync(topics[1], "middle");

        var result = await poll;
        Assert.Equal(["middle"], Texts(result));
        Assert.All(topics, t => Assert.Equal(0, backend.Signals.WaitingOn(t)));
    }

    [Fact]
    public async Task AnUnknownTopicFailsThePollAtOnce()
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();

        var result = await backend.PollAsync(new Subscription(topic, 1), new Subscription(topic + 1000, 1));

        Assert.Equal(topic + 1000, result.UnknownTopicId);
        Assert.Equal(0, backend.Signals.WaitingOn(topic));
    }

    [Fact]
    public async Task ASubscriptionWithoutACursorWaitsForTheNextMessageOnly()
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();
        await backend.PublishAsync(topic, "before");

        var poll = backend.PollAsync(new Subscription(topic, null));
        await WaitUntilWaitingAsync(backend, topic, 1);
        await backend.PublishAsync(topic, "after");

        Assert.Equal(["after"], Texts(await poll));
    }

    [Fact]
    public async Task ACappedAnswerIsSharedFairlyBetweenTopics()
    {
        var backend = await StartAsync(o => o.MaxMessagesPerPoll = 4);
        var busy = await backend.CreateAsync();
        var quiet = await backend.CreateAsync();
        for (var i = 1; i <= 10; i++)
        {
            await backend.PublishAsync(busy, $"b{i}");
        }
        await backend.PublishAsync(quiet, "q1");

        var result = await backend.PollAtOnceAsync(new Subscription(busy, 1), new Subscription(quiet, 1));

        // Each topic's share is 2; the quiet topic needs 1, so the busy one takes the room left.
        Assert.Equal(["b1", "b2", "b3", "q1"], Texts(result));
    }

    [Fact]
    public async Task TheByteCapAlwaysLetsOneMessageThrough()
    {
        var backend = await StartAsync(o => o.MaxBytesPerPoll = 10);
        var topic = await backend.CreateAsync();
        await backend.PublishAsync(topic, new string('x', 100));
        await backend.PublishAsync(topic, "second");

        var first = await backend.PollAtOnceAsync(new Subscription(topic, 1));
        var second = await backend.PollAtOnceAsync(new Subscription(topic, 2));

        Assert.Equal(1, Assert.Single(first.Messages).MessageId);
        Assert.Equal(["second"], Texts(second));
    }

    [Fact]
    public async Task CancellingAWaitingPollAnswersEmptyAndLeavesNoWaiter()
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();
        using var cancel = new CancellationTokenSource();
        var poll = backend.Poller.PollAsync([new Subscription(topic, 1)], answerBytes: null, SubscriptionWait.Until(cancel.Token)).AsTask();
        await WaitUntilWaitingAsync(backend, topic, 1);

        await cancel.CancelAsync();

        Assert.True((await poll.WaitAsync(Bound)).IsEmpty);
        Assert.Equal(0, backend.Signals.WaitingOn(topic));
    }

    [Fact]
    public async Task TopicsAreListedInIdOrderInPagesWithoutDeletedOnes()
    {
        var backend = await StartAsync();
        var topics = new List<long>();
        for (var i = 0; i < 5; i++)
        {
            topics.Add(await backend.CreateAsync());
        }
        await backend.Store.DeleteTopicAsync(topics[1]);

        var page1 = await backend.Store.ListTopicsAsync(0, 2);
        var page2 = await backend.Store.ListTopicsAsync(page1[^1].TopicId, 2);
        var page3 = await backend.Store.ListTopicsAsync(page2[^1].TopicId, 2);

        Assert.Equal([topics[0], topics[2], topics[3], topics[4]], page1.Concat(page2).Concat(page3).Select(t => t.TopicId));
        Assert.Equal(4, (await backend.Store.GetStatisticsAsync()).TopicCount);
    }

    [Fact]
    public async Task AFullStoreRefusesMessagesSaysWhenToRetryAndDropsNothing()
    {
        var backend = await StartAsync(o => { o.MaxRetainedBytes = 3000; o.MaxMessageBytes = 1000; });
        var topic = await backend.CreateAsync();
        var stored = 0;
        PublishResult result;
        while ((result = await backend.PublishAsync(topic, new string('x', 500))).Status == PublishStatus.Published)
        {
            stored++;
            Assert.True(stored < 10, "the store never filled");
        }

        Assert.Equal(PublishStatus.StorageFull, result.Status);
        Assert.True(result.RetryAfter > TimeSpan.Zero, "a full store says when to retry");
        Assert.True(stored >= 1, "at least one message fits");
        Assert.Equal(stored, (await backend.PollAtOnceAsync(new Subscription(topic, 1))).Messages.Count);
        Assert.InRange((await backend.Store.GetStatisticsAsync()).RetainedBytes, stored * 500, 3000);
    }

    [Theory]
    [InlineData("text/plain\r\nX-Injected: 1")]
    [InlineData("text/plain\n")]
    [InlineData("text/plain; a=\"\u0001\"")]
    [InlineData("text/plain\u007f")]
    [InlineData("")]
    public async Task AContentTypeNoPartHeaderCanCarryIsRefusedAsAStatusAndNothingIsStored(string contentType)
    {
        var backend = await StartAsync();
        var topic = await backend.CreateAsync();

        var refused = await backend.Store.PublishAsync(topic, "x"u8.ToArray(), contentType).AsTask().WaitAsync(Bound);
        var tabbed = await backend.Store.PublishAsync(topic, "y"u8.ToArray(), "text/plain;\tcharset=utf-8").AsTask().WaitAsync(Bound);

        Assert.Equal(PublishStatus.InvalidContentType, refused.Status);
        Assert.Equal(PublishStatus.Published, tabbed.Status);
        var messages = (await backend.PollAtOnceAsync(new Subscription(topic, 1))).Messages;
        Assert.Equal("text/plain;\tcharset=utf-8", Assert.Single(messages).ContentType);
    }

    [Fact]
    public async Task ATopicWithNoMessageAndNoPollForTheIdleTimeToLiveIsDeleted()
    {
        var idleTimeToLive = ShortTimeToLive * 4;
        var backend = await StartAsync(o =>
        {
            o.TopicIdleTimeToLive = idleTimeToLive;
            o.RetentionSweepInterval = TimeSpan.FromMilliseconds(50);
        });
        var idle = await backend.CreateAsync();
        var busy = await backend.CreateAsync();

        // Time passes in steps well under the idle time to live; the busy topic is read at every step.
        var deleted = false;
        for (var step = 0; step < 40 && !deleted; step++)
        {
            await LetTimePassAsync(ShortTimeToLive / 2);
            Assert.Null((await backend.PollAtOnceAsync(new Subscription(busy, 1))).UnknownTopicId);
            deleted = await backend.Store.GetTopicAsync(idle) is null;
        }

        Assert.True(deleted, "the idle topic was deleted by the sweep");
        Assert.Equal(idle, (await backend.PollAtOnceAsync(new Subscription(idle, 1))).UnknownTopicId);
        Assert.NotNull(await backend.Store.GetTopicAsync(busy));
    }

    [Fact]
    public async Task TopicsBeyondMaxTopicsAreRefused()
    {
        var backend = await StartAsync(o => o.MaxTopics = 2);
        await backend.CreateAsync();
        var second = await backend.CreateAsync();

        var refused = await backend.Store.CreateTopicAsync();
        await backend.Store.DeleteTopicAsync(second);
        var again = await backend.Store.CreateTopicAsync();

        Assert.Null(refused);
        Assert.NotNull(again);
    }

    private protected static async Task WaitUntilWaitingAsync(Backend backend, long topic, int polls)
    {
        var deadline = DateTime.UtcNow + Bound;
        while (backend.Signals.WaitingOn(topic) < polls)
        {
            Assert.True(DateTime.UtcNow < deadline, $"no poll came to wait on topic {topic}");
            await Task.Delay(5);
        }
    }
}
