using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using Laharsub.Server.Storage;
using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// The Redis store with 16 buckets on a 3-primary Redis Cluster: topics spread over every shard, each
/// shard's scripts announce changes on their own shard channel, listings and statistics gather every
/// bucket, limits hold per bucket, a publish to several topics is atomic within a bucket and refused
/// across buckets, and state topics keep their documents in their buckets (docs/scale-out.md).
/// </summary>
[Collection(SharedRedisCluster.Name)]
public sealed class RedisClusterBucketTests(RedisClusterFixture cluster) : IAsyncLifetime
{
    private const int Buckets = 16;
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);
    private readonly List<RedisStoreHandle> _handles = [];
    private readonly Signals _signals = new();
    private readonly string _prefix = $"buckets-{Guid.NewGuid():N}:";

    [Fact]
    public async Task TopicsOfEveryBucketLandOnEveryShardAndArePublishedReadAndSignalled()
    {
        var store = Start(new LaharsubStoreOptions());
        var topics = new List<TopicInfo>();
        for (var i = 0; i < 2 * Buckets; i++)
        {
            topics.Add(await CreateAsync(store));
        }
        foreach (var node in cluster.Cluster.Nodes)
        {
            var keys = long.Parse(await RedisCli.RunAsync(Bound, "-p", node.Port.ToString(CultureInfo.InvariantCulture), "dbsize"), CultureInfo.InvariantCulture);
            Assert.True(keys > 0, $"the shard on port {node.Port} holds no key: the 16 buckets do not spread over the 3 shards");
        }
        foreach (var topic in topics)
        {
            var published = await store.PublishAsync(topic.TopicId, Encoding.UTF8.GetBytes($"to {topic.TopicId}"), "text/plain").AsTask().WaitAsync(Bound);
            Assert.Equal(PublishStatus.Published, published.Status);
            Assert.Equal(topic.Epoch, published.Epoch);
        }
        foreach (var topic in topics)
        {
            Assert.True(await _signals.WaitAsync(topic.TopicId, Bound), $"topic {topic.TopicId} (bucket {topic.TopicId % Buckets}) was not signalled by its shard channel");
        }
        var requests = topics.Select(topic => new TopicReadRequest(topic.TopicId, 1, 10, 1 << 20)).ToArray();
        var results = new TopicReadResult[requests.Length];
        var messages = new List<Message>();
        await store.ReadAsync(requests, results, messages).AsTask().WaitAsync(Bound);
        Assert.Equal(topics.Select(topic => $"to {topic.TopicId}"), messages.Select(message => Encoding.UTF8.GetString(message.Body.Span)));
        Assert.All(results, result => Assert.Equal(1, result.LastMessageId));
    }

    [Fact]
    public async Task ListingsAndStatisticsGatherEveryBucketInIdOrder()
    {
        var store = Start(new LaharsubStoreOptions());
        var ids = new List<long>();
        for (var i = 0; i < 20; i++)
        {
            ids.Add((await CreateAsync(store)).TopicId);
        }
        Assert.True(await store.DeleteTopicAsync(ids[3]).AsTask().WaitAsync(Bound));
        ids.RemoveAt(3);
        var listed = new List<long>();
        long after = 0;
        while (true)
        {
            var page = await store.ListTopicsAsync(after, 7).AsTask().WaitAsync(Bound);
            if (page.Count == 0)
            {
                break;
            }
            Assert.True(page.Count <= 7, $"a page of 7 held {page.Count} topics");
            listed.AddRange(page.Select(topic => topic.TopicId));
            after = page[^1].TopicId;
        }
        Assert.Equal(ids, listed);
        await store.PublishAsync(ids[0], new byte[100], "application/octet-stream").AsTask().WaitAsync(Bound);
        var statistics = await store.GetStatisticsAsync().AsTask().WaitAsync(Bound);
        Assert.Equal(19, statistics.TopicCount);
        Assert.True(statistics.RetainedBytes >= 100, $"the statistics counted {statistics.RetainedBytes} retained bytes for a message of 100");
    }

    /// <summary>MaxTopics = 16 over 16 buckets is one topic per bucket: the 17th topic, in the first one's bucket, is refused.</summary>
    [Fact]
    public async Task MaxTopicsHoldsPerBucket()
    {
        var store = Start(new LaharsubStoreOptions { MaxTopics = Buckets });
        for (var i = 0; i < Buckets; i++)
        {
            await CreateAsync(store);
        }
        Assert.Null(await store.CreateTopicAsync().AsTask().WaitAsync(Bound));
    }

    [Fact]
    public async Task APublishToTopicsOfTwoBucketsIsRefusedAndStoresNothing()
    {
        var store = Start(new LaharsubStoreOptions());
        var a = await CreateAsync(store);
        var b = await CreateAsync(store);
        Assert.NotEqual(a.TopicId % Buckets, b.TopicId % Buckets);
        PublishTarget[] targets = [new(a.TopicId, null), new(b.TopicId, null)];
        var result = await store.PublishManyAsync(targets, "x"u8.ToArray(), "text/plain", new IdempotencyKey("k1", "f1")).AsTask().WaitAsync(Bound);
        Assert.Equal(PublishStatus.TopicsNotTogether, result.Status);
        foreach (var topic in new[] { a, b })
        {
            Assert.Equal(0, (await store.GetTopicAsync(topic.TopicId).AsTask().WaitAsync(Bound))!.LastMessageId);
        }
    }

    [Fact]
    public async Task APublishToTopicsOfOneBucketIsAtomicAndItsIdempotencyKeyReplays()
    {
        var store = Start(new LaharsubStoreOptions());
        var first = await CreateAsync(store);
        TopicInfo? second = null;
        // Ids grow one by one, so the 16th topic after the first is in the first one's bucket.
        for (var i = 0; i < Buckets; i++)
        {
            second = await CreateAsync(store);
        }
        Assert.Equal(first.TopicId % Buckets, second!.TopicId % Buckets);
        PublishTarget[] targets = [new(first.TopicId, null), new(second.TopicId, null)];
        var key = new IdempotencyKey("same-bucket", "fingerprint");
        var published = await store.PublishManyAsync(targets, "x"u8.ToArray(), "text/plain", key).AsTask().WaitAsync(Bound);
        Assert.Equal(PublishStatus.Published, published.Status);
        var replayed = await store.PublishManyAsync(targets, "x"u8.ToArray(), "text/plain", key).AsTask().WaitAsync(Bound);
        Assert.True(replayed.Replayed, "a retry with the same key was not replayed");
        Assert.Equal(published.Topics.Select(topic => topic.MessageId), replayed.Topics.Select(topic => topic.MessageId));
        PublishTarget[] refused = [new(first.TopicId, null), new(second.TopicId, "0000000000000000")];
        var none = await store.PublishManyAsync(refused, "y"u8.ToArray(), "text/plain").AsTask().WaitAsync(Bound);
        Assert.Equal(PublishStatus.EpochMismatch, none.Status);
        Assert.Equal(1, (await store.GetTopicAsync(first.TopicId).AsTask().WaitAsync(Bound))!.LastMessageId);
    }

    public Task InitializeAsync() => Task.CompletedTask;

    /// <summary>
    /// State topics in every bucket: each document lives in its topic's slot, on its shard, and comes back byte for byte
    /// (an empty object stays one, an empty array one, a 20-digit integer keeps all its digits: the scripts never parse it);
    /// a compare-and-set holds there; deleting the topics frees every byte their documents and messages took.
    /// </summary>
    [Fact]
    public async Task StateTopicsOfEveryBucketKeepTheirDocumentsInTheirSlots()
    {
        var store = Start(new LaharsubStoreOptions());
        var topics = new List<TopicInfo>();
        for (var i = 0; i < Buckets; i++)
        {
            var topic = await store.CreateTopicAsync(state: true).AsTask().WaitAsync(Bound);
            Assert.True(topic is { State: true }, "a state topic was not created");
            topics.Add(topic);
        }
        foreach (var topic in topics)
        {
            var first = await store.PublishAsync(topic.TopicId, Encoding.UTF8.GetBytes($$"""{"t":{{topic.TopicId}},"big":12345678901234567890,"empty":{},"list":[]}"""),
                MergePatch.MediaType).AsTask().WaitAsync(Bound);
            Assert.Equal((PublishStatus.Published, 1L, topic.Epoch), (first.Status, first.MessageId, first.Epoch));
            PublishTarget[] target = [new(topic.TopicId, topic.Epoch, IfVersion: 1)];
            var second = await store.PublishManyAsync(target, Encoding.UTF8.GetBytes("""{"empty":null,"n":{"x":[{}]}}"""), MergePatch.MediaType).AsTask().WaitAsync(Bound);
            Assert.Equal((PublishStatus.Published, 2L), (second.Status, second.Topics[0].MessageId));
            var stale = await store.PublishManyAsync(target, Encoding.UTF8.GetBytes("""{"late":true}"""), MergePatch.MediaType).AsTask().WaitAsync(Bound);
            Assert.Equal((PublishStatus.VersionMismatch, 2L), (stale.Status, stale.Topics[0].MessageId));
            Assert.True(await _signals.WaitAsync(topic.TopicId, Bound), $"state topic {topic.TopicId} (bucket {topic.TopicId % Buckets}) was not signalled by its shard channel");
        }

        var requests = topics.Select(topic => new TopicReadRequest(topic.TopicId, 1, 10, 1 << 20, WithDocument: true)).ToArray();
        var results = new TopicReadResult[requests.Length];
        await store.ReadAsync(requests, results, []).AsTask().WaitAsync(Bound);
        Assert.Equal(topics.Select(topic => $$$"""{"t":{{{topic.TopicId}}},"big":12345678901234567890,"list":[],"n":{"x":[{}]}}"""),
            results.Select(result => Encoding.UTF8.GetString(result.Document!.Value.Span)));
        Assert.All(results, result => Assert.Equal((true, 2L), (result.State, result.LastMessageId)));

        var documentKey = $"{_prefix}{{{topics[0].TopicId % Buckets}}}t:{topics[0].TopicId}:s";
        var port = cluster.Cluster.Nodes[0].Port.ToString(CultureInfo.InvariantCulture);
        Assert.Equal("1", (await RedisCli.RunAsync(Bound, "-c", "-p", port, "exists", documentKey)).Trim());
        foreach (var topic in topics)
        {
            Assert.True(await store.DeleteTopicAsync(topic.TopicId).AsTask().WaitAsync(Bound));
        }
        Assert.Equal("0", (await RedisCli.RunAsync(Bound, "-c", "-p", port, "exists", documentKey)).Trim());
        Assert.Equal(new StoreStatistics(0, 0), await store.GetStatisticsAsync().AsTask().WaitAsync(Bound));
    }

    /// <summary>A patch to state topics of one bucket is all or none with its idempotency key, and refused across buckets.</summary>
    [Fact]
    public async Task APatchToStateTopicsOfOneBucketIsAtomicAndItsIdempotencyKeyReplays()
    {
        var store = Start(new LaharsubStoreOptions());
        var first = (await store.CreateTopicAsync(state: true).AsTask().WaitAsync(Bound))!;
        var other = (await store.CreateTopicAsync(state: true).AsTask().WaitAsync(Bound))!;
        TopicInfo? second = null;
        for (var i = 1; i < Buckets; i++)
        {
            second = await store.CreateTopicAsync(state: true).AsTask().WaitAsync(Bound);
        }
        Assert.Equal(first.TopicId % Buckets, second!.TopicId % Buckets);
        var patch = Encoding.UTF8.GetBytes("""{"x":1}""");
        PublishTarget[] together = [new(first.TopicId), new(second.TopicId, IfVersion: 0)];
        var key = new IdempotencyKey("state-bucket", "fingerprint");

        var published = await store.PublishManyAsync(together, patch, MergePatch.MediaType, key).AsTask().WaitAsync(Bound);
        var replayed = await store.PublishManyAsync(together, patch, MergePatch.MediaType, key).AsTask().WaitAsync(Bound);
        var refused = await store.PublishManyAsync(together, patch, MergePatch.MediaType).AsTask().WaitAsync(Bound);
        var apart = await store.PublishManyAsync(new PublishTarget[] { new(first.TopicId), new(other.TopicId) }, patch, MergePatch.MediaType).AsTask().WaitAsync(Bound);

        Assert.Equal((PublishStatus.Published, 1L, 1L), (published.Status, published.Topics[0].MessageId, published.Topics[1].MessageId));
        Assert.True(replayed.Replayed, "a retry with the same key was not replayed");
        Assert.Equal([1L, 1L], replayed.Topics.Select(topic => topic.MessageId));
        Assert.Equal((PublishStatus.VersionMismatch, PublishStatus.NotAttempted), (refused.Status, refused.Topics[0].Status));
        Assert.Equal(PublishStatus.TopicsNotTogether, apart.Status);
        foreach (var topic in new[] { first, second, other })
        {
            Assert.Equal(topic == other ? 0 : 1, (await store.GetTopicAsync(topic.TopicId).AsTask().WaitAsync(Bound))!.LastMessageId);
        }
    }

    /// <summary>
    /// Topics with presence in every bucket: each companion shares its topic's bucket (id + Buckets), so
    /// renewals, listings, event publishes, the sweep and the delete that takes the companion and members
    /// along run on the shards, each in one slot, and the sweep gathers every bucket.
    /// </summary>
    [Fact]
    public async Task TopicsWithPresenceKeepTheirCompanionAndMembersInTheirBucket()
    {
        var store = Start(new LaharsubStoreOptions());
        var presence = (IPresenceStore)store;
        var now = DateTimeOffset.UtcNow;
        var topics = new List<TopicInfo>();
        for (var i = 0; i < Buckets; i++)
        {
            var topic = await presence.CreateTopicWithPresenceAsync().AsTask().WaitAsync(Bound);
            Assert.NotNull(topic);
            Assert.Equal(topic.TopicId + Buckets, topic.PresenceTopicId);
            topics.Add(topic);
        }
        Assert.Equal(Buckets, topics.Select(t => t.TopicId % Buckets).Distinct().Count());

        foreach (var topic in topics)
        {
            var renewal = await presence.RenewAsync(topic.TopicId, "alice", null, now.AddSeconds(1), maxMembers: 10).AsTask().WaitAsync(Bound);
            Assert.Equal(new PresenceRenewal(PresenceStatus.Done, true, 1, topic.PresenceTopicId!.Value), renewal);
            Assert.Equal("alice", Assert.Single((await presence.ListMembersAsync(topic.TopicId, null, 10).AsTask().WaitAsync(Bound))!.Members).Member);
            var published = await presence.PublishEventAsync(topic.PresenceTopicId.Value, Encoding.UTF8.GetBytes("{}")).AsTask().WaitAsync(Bound);
            Assert.Equal(PublishStatus.Published, published.Status);
            Assert.Equal(topic.TopicId, (await store.GetTopicAsync(topic.PresenceTopicId.Value).AsTask().WaitAsync(Bound))!.PresenceOf);
        }
        Assert.True(await store.DeleteTopicAsync(topics[0].TopicId).AsTask().WaitAsync(Bound));
        Assert.Null(await store.GetTopicAsync(topics[0].PresenceTopicId!.Value).AsTask().WaitAsync(Bound));

        var swept = await presence.SweepAsync(now.AddSeconds(2), 1000).AsTask().WaitAsync(Bound);

        Assert.Equal(topics.Skip(1).Select(t => (t.TopicId, t.PresenceTopicId!.Value, "alice", 0)).Order(),
            swept.Select(d => (d.TopicId, d.PresenceTopicId, d.Member, d.Occupancy)).Order());
    }

    public async Task DisposeAsync()
    {
        foreach (var handle in _handles)
        {
            await handle.DisposeAsync();
        }
    }

    private ILaharsubStore Start(LaharsubStoreOptions options)
    {
        var handle = RedisStores.Create(cluster.Cluster.Configuration, _prefix, options, _signals, redis => redis.Buckets = Buckets);
        _handles.Add(handle);
        return handle.Store;
    }

    private static async Task<TopicInfo> CreateAsync(ILaharsubStore store) =>
        await store.CreateTopicAsync().AsTask().WaitAsync(Bound) ?? throw new InvalidOperationException("CreateTopicAsync returned null below MaxTopics.");

    /// <summary>Records the topics the store signalled.</summary>
    private sealed class Signals : ITopicSignals
    {
        private readonly ConcurrentDictionary<long, TaskCompletionSource> _signalled = new();

        public void Signal(long topicId) => _signalled.GetOrAdd(topicId, _ => new(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();

        public void SignalAll()
        {
        }

        public async Task<bool> WaitAsync(long topicId, TimeSpan timeout)
        {
            var signalled = _signalled.GetOrAdd(topicId, _ => new(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
            return await Task.WhenAny(signalled, Task.Delay(timeout)) == signalled;
        }
    }
}
