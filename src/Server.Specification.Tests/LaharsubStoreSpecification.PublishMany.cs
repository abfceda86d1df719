using System.Text;
using Laharsub.Server.Storage;
using Xunit;

namespace Laharsub.Server.Specification;

public abstract partial class LaharsubStoreSpecification
{
    // ---------------------------------------------------------------------------------------------------
    // Publishing to several topics at once, and idempotency keys

    /// <summary>One message to several topics lands in each under that topic's next id; the answer lists them in the targets' order.</summary>
    [Fact]
    public async Task PublishingToSeveralTopicsAppendsToEachAndAnswersEachId()
    {
        var store = await StartAsync();
        var a = await CreateTopicWithMessagesAsync(store, "a1");
        var b = await CreateTopicAsync(store);
        var c = await CreateTopicWithMessagesAsync(store, "c1", "c2");

        var result = await PublishManyAsync(store, [new(c.TopicId), new(a.TopicId, a.Epoch), new(b.TopicId)], "all");
        var (_, messages) = await ReadAsync(store, All(a.TopicId), All(b.TopicId), All(c.TopicId));

        Assert.Equal(PublishStatus.Published, result.Status);
        Assert.False(result.Replayed);
        Assert.Equal([(3L, c.Epoch), (2L, a.Epoch), (1L, b.Epoch)], result.Topics.Select(t => (t.MessageId, t.Epoch!)));
        Assert.Equal(["a1", "all", "all", "c1", "c2", "all"], Texts(messages));
    }

    /// <summary>A publish to several topics signals every one of them.</summary>
    [Fact]
    public async Task APublishToSeveralTopicsSignalsEachTopic()
    {
        var store = await StartAsync();
        var a = await CreateTopicAsync(store);
        var b = await CreateTopicAsync(store);
        var before = (_signals.CountOf(a.TopicId), _signals.CountOf(b.TopicId));

        await PublishManyAsync(store, [new(a.TopicId), new(b.TopicId)], "both");

        Assert.True(await _signals.WaitForAsync(a.TopicId, before.Item1 + 1, SignalBound), $"topic {a.TopicId} was published to but not signalled");
        Assert.True(await _signals.WaitForAsync(b.TopicId, before.Item2 + 1, SignalBound), $"topic {b.TopicId} was published to but not signalled");
    }

    /// <summary>The mixed cases: any missing or mismatched topic publishes nothing anywhere, and the answer names each refusing topic.</summary>
    [Theory]
    [InlineData("ok,missing,ok", PublishStatus.TopicNotFound, "NotAttempted,TopicNotFound,NotAttempted")]
    [InlineData("ok,mismatch", PublishStatus.EpochMismatch, "NotAttempted,EpochMismatch")]
    [InlineData("mismatch,missing,ok", PublishStatus.TopicNotFound, "EpochMismatch,TopicNotFound,NotAttempted")]
    [InlineData("deleted,ok", PublishStatus.TopicNotFound, "TopicNotFound,NotAttempted")]
    [InlineData("missing", PublishStatus.TopicNotFound, "TopicNotFound")]
    public async Task AnyRefusingTopicPublishesNothingAnywhere(string shape, PublishStatus expected, string perTopic)
    {
        var store = await StartAsync();
        var targets = new List<PublishTarget>();
        var existing = new List<TopicInfo>();
        foreach (var kind in shape.Split(','))
        {
            var topic = await CreateTopicAsync(store);
            switch (kind)
            {
                case "ok":
                    existing.Add(topic);
                    targets.Add(new(topic.TopicId, topic.Epoch));
                    break;
                case "mismatch":
                    existing.Add(topic);
                    targets.Add(new(topic.TopicId, "0000000000000000"));
                    break;
                case "deleted":
                    await Bounded(store.DeleteTopicAsync(topic.TopicId));
                    targets.Add(new(topic.TopicId));
                    break;
                default:
                    targets.Add(new(topic.TopicId + 1000));
                    break;
            }
        }
        var before = (await Bounded(store.GetStatisticsAsync())).RetainedBytes;

        var result = await PublishManyAsync(store, [.. targets], "never");

        Assert.Equal(expected, result.Status);
        Assert.Equal(perTopic, string.Join(",", result.Topics.Select(t => t.Status)));
        Assert.All(result.Topics.Where(t => t.Status == PublishStatus.EpochMismatch), t => Assert.False(string.IsNullOrEmpty(t.Epoch)));
        foreach (var topic in existing)
        {
            Assert.Equal(0L, (await InfoAsync(store, topic.TopicId)).LastMessageId);
        }
        Assert.Equal(before, (await Bounded(store.GetStatisticsAsync())).RetainedBytes);
    }

    /// <summary>When every copy does not fit in <see cref="LaharsubStoreOptions.MaxRetainedBytes"/>, none is stored, although one copy would fit.</summary>
    [Fact]
    public async Task APublishWhoseCopiesDoNotAllFitStoresNone()
    {
        // Ten copies of 500 bytes exceed 3800 bytes in any store's accounting; one copy fits (as the single-topic fact shows).
        var store = await StartAsync(o => { o.MaxRetainedBytes = 3800; o.MaxMessageBytes = 1000; });
        var topics = new List<TopicInfo>();
        for (var i = 0; i < 10; i++)
        {
            topics.Add(await CreateTopicAsync(store));
        }
        var body = Encoding.UTF8.GetBytes(new string('x', 500));

        var result = await Bounded(store.PublishManyAsync(topics.Select(t => new PublishTarget(t.TopicId)).ToArray(), body, TextPlain));
        var statistics = await Bounded(store.GetStatisticsAsync());
        var single = await PublishAsync(store, topics[0].TopicId, body);

        Assert.Equal(PublishStatus.StorageFull, result.Status);
        Assert.Equal(0L, statistics.RetainedBytes);
        Assert.Equal((PublishStatus.Published, 1L), (single.Status, single.MessageId));
    }

    /// <summary>Targets that no store accepts: none, the same topic twice, more than <see cref="LaharsubStoreOptions.MaxTopicsPerPublish"/>.</summary>
    [Fact]
    public async Task BadTargetsAreArgumentExceptions()
    {
        var store = await StartAsync(options => options.MaxTopicsPerPublish = 2);
        var a = await CreateTopicAsync(store);
        var b = await CreateTopicAsync(store);
        var c = await CreateTopicAsync(store);

        await Assert.ThrowsAnyAsync<ArgumentException>(() => PublishManyAsync(store, [], "x"));
        await Assert.ThrowsAnyAsync<ArgumentException>(() => PublishManyAsync(store, [new(a.TopicId), new(a.TopicId)], "x"));
        await Assert.ThrowsAnyAsync<ArgumentException>(() => PublishManyAsync(store, [new(a.TopicId), new(b.TopicId), new(c.TopicId)], "x"));
        Assert.Equal(0L, (await InfoAsync(store, a.TopicId)).LastMessageId);
    }

    /// <summary>A retry with the same idempotency key and request answers the first answer and stores nothing more.</summary>
    [Fact]
    public async Task ARetryWithTheSameKeyReplaysTheFirstAnswerAndStoresNothing()
    {
        var store = await StartAsync();
        var a = await CreateTopicAsync(store);
        var b = await CreateTopicAsync(store);
        PublishTarget[] targets = [new(a.TopicId), new(b.TopicId)];
        var key = new IdempotencyKey("retry-1", "fingerprint-1");

        var first = await PublishManyAsync(store, targets, "once", key);
        await PublishAsync(store, a.TopicId, "between");
        var second = await PublishManyAsync(store, targets, "once", key);
        var (_, messages) = await ReadAsync(store, All(a.TopicId), All(b.TopicId));

        Assert.Equal((PublishStatus.Published, false), (first.Status, first.Replayed));
        Assert.Equal((PublishStatus.Published, true), (second.Status, second.Replayed));
        Assert.Equal(first.Topics.Select(t => (t.MessageId, t.Epoch)), second.Topics.Select(t => (t.MessageId, t.Epoch)));
        Assert.Equal(["once", "between", "once"], Texts(messages));
    }

    /// <summary>The same key with another request is refused and stores nothing; a refused publish records no key, so its retry runs.</summary>
    [Fact]
    public async Task AKeyWithAnotherRequestIsRefusedAndARefusalRecordsNoKey()
    {
        var store = await StartAsync();
        var a = await CreateTopicAsync(store);

        await PublishManyAsync(store, [new(a.TopicId)], "first", new IdempotencyKey("k", "f1"));
        var other = await PublishManyAsync(store, [new(a.TopicId)], "other", new IdempotencyKey("k", "f2"));
        var refused = await PublishManyAsync(store, [new(a.TopicId + 100)], "x", new IdempotencyKey("k2", "f3"));
        var createdLater = await CreateTopicAsync(store);
        var rerun = await PublishManyAsync(store, [new(createdLater.TopicId)], "x", new IdempotencyKey("k2", "f3"));

        Assert.Equal(PublishStatus.IdempotencyKeyMismatch, other.Status);
        Assert.Equal(PublishStatus.TopicNotFound, refused.Status);
        Assert.Equal((PublishStatus.Published, false), (rerun.Status, rerun.Replayed));
        Assert.Equal(1L, (await InfoAsync(store, a.TopicId)).LastMessageId);
    }

    /// <summary>After <see cref="LaharsubStoreOptions.IdempotencyKeyLifetime"/> a key is forgotten: the same request publishes again.</summary>
    [Fact]
    public async Task AKeyIsForgottenAfterItsLifetime()
    {
        var store = await StartAsync(options =>
        {
            options.IdempotencyKeyLifetime = ShortTimeToLive;
            options.MessageTimeToLive = TimeSpan.FromHours(1);
        });
        var a = await CreateTopicAsync(store);
        var key = new IdempotencyKey("lifetime", "f");

        await PublishManyAsync(store, [new(a.TopicId)], "x", key);
        await LetRetentionPassAsync();
        var again = await PublishManyAsync(store, [new(a.TopicId)], "x", key);

        Assert.Equal((PublishStatus.Published, false, 2L), (again.Status, again.Replayed, again.Topics[0].MessageId));
    }

    private static Task<MultiPublishResult> PublishManyAsync(ILaharsubStore store, PublishTarget[] targets, string text, IdempotencyKey? key = null) =>
        Bounded(store.PublishManyAsync(targets, Encoding.UTF8.GetBytes(text), TextPlain, key));
}
