using System.Globalization;
using System.Text;
using Laharsub.Server.Storage;
using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// Two instances writing one state topic's document at once (docs/scale-out.md, "State topics on Redis"): each applies
/// a patch in .NET to the document it read and commits it only while the document is still at that version (and epoch).
/// Instance A goes through a <see cref="HoldingProxy"/> that holds its commit, recognised by the new document it
/// carries, until instance B (straight to Redis) has committed a write of its own: the race is then certain, not hoped for.
/// </summary>
public sealed class RedisStateConflictTests(RedisStoreSpecificationTests.PrivateRedis redis) : IClassFixture<RedisStoreSpecificationTests.PrivateRedis>
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task TwoWritersRacingTheSameVersionBothApplyExactlyOnceInOrder()
    {
        await using var writers = await Writers.StartAsync(redis.Server);
        var (proxy, a, b, topic) = (writers.Proxy, writers.A, writers.B, writers.Topic);
        Assert.Equal(1, await PatchAsync(b, topic.TopicId, """{"base":1}"""));

        // A's commit is the only command that carries the document A made from version 1.
        var hold = proxy.Arm(Encoding.UTF8.GetBytes("""{"base":1,"a":1}"""));
        var writing = PatchAsync(a, topic.TopicId, """{"a":1}""");
        await hold.Held.Task.WaitAsync(Bound);
        var bWon = await PatchAsync(b, topic.TopicId, """{"b":2}""");
        hold.Release();
        var aRetried = await writing.WaitAsync(Bound);

        Assert.Equal((2L, 3L), (bWon, aRetried));
        var (document, version, messages) = await ReadAsync(b, topic.TopicId);
        Assert.Equal(("""{"base":1,"b":2,"a":1}""", 3L), (document, version));
        Assert.Equal(["""{"base":1}""", """{"b":2}""", """{"a":1}"""], messages);
    }

    /// <summary>A write that loses the race every time gives up after a bound, saying so, and stores nothing.</summary>
    [Fact]
    public async Task AWriterThatKeepsLosingTheRaceGivesUpWithAClearErrorAndStoresNothing()
    {
        await using var writers = await Writers.StartAsync(redis.Server);
        var (proxy, a, b, topic) = (writers.Proxy, writers.A, writers.B, writers.Topic);
        await PatchAsync(b, topic.TopicId, """{"n":0}""");

        // Every document A makes ends with its key after B's (never so in the patch itself, which starts with it).
        var pattern = Encoding.UTF8.GetBytes(""","mark":"A"}""");
        var hold = proxy.Arm(pattern);
        var writing = PatchAsync(a, topic.TopicId, """{"mark":"A"}""");
        var lost = 0;
        while (true)
        {
            var next = await Task.WhenAny(hold.Held.Task, writing).WaitAsync(Bound);
            if (next == writing)
            {
                break;
            }
            Assert.True(lost < 1000, "the writer never gave up");
            lost++;
            await PatchAsync(b, topic.TopicId, $$"""{"n":{{lost}}}""");
            var held = hold;
            hold = proxy.Arm(pattern);
            held.Release();
        }

        var refused = await Assert.ThrowsAsync<LaharsubStoreUnavailableException>(() => writing);
        Assert.Contains($"document of topic {topic.TopicId} changed", refused.Message, StringComparison.Ordinal);
        Assert.True(lost > 1, $"the writer gave up after losing {lost} times");
        var (document, version, messages) = await ReadAsync(b, topic.TopicId);
        Assert.Equal(($$"""{"n":{{lost}}}""", lost + 1L), (document, version));
        Assert.DoesNotContain(messages, message => message.Contains("mark", StringComparison.Ordinal));
    }

    /// <summary>
    /// A patch applied to a document of a history that a failover lost is applied again to the new history's document,
    /// even at an equal version: the commit checks the epoch with the version. The failover is emulated while A's commit
    /// is held: the last write is taken back, as a promoted replica that never got it would lack it, and the bucket's
    /// history is marked as written by another primary (what a promoted replica's replication id does).
    /// </summary>
    [Fact]
    public async Task APatchAppliedToADocumentAFailoverLostIsAppliedAgainToTheNewHistory()
    {
        await using var writers = await Writers.StartAsync(redis.Server);
        var (proxy, a, b, topic) = (writers.Proxy, writers.A, writers.B, writers.Topic);
        await PatchAsync(b, topic.TopicId, """{"kept":1}""");
        await PatchAsync(b, topic.TopicId, """{"lost":1}""");

        var hold = proxy.Arm(Encoding.UTF8.GetBytes("""{"kept":1,"lost":1,"a":1}"""));
        var writing = a.PublishAsync(topic.TopicId, Encoding.UTF8.GetBytes("""{"a":1}"""), MergePatch.MediaType).AsTask();
        await hold.Held.Task.WaitAsync(Bound);
        var meta = $"{writers.Prefix}{{0}}t:{topic.TopicId}";
        await RedisCli.RunAsync(Bound, "-p", redis.Server.Port.ToString(CultureInfo.InvariantCulture), "EVAL", """
            redis.call('RPOP', KEYS[2])
            redis.call('HINCRBY', KEYS[1], 'last', -1)
            redis.call('SET', KEYS[3], ARGV[1])
            redis.call('HSET', KEYS[4], 'replid', 'another-primary')
            """, "4", meta, meta + ":m", meta + ":s", $"{writers.Prefix}{{0}}era", """{"kept":1}""");
        var newHistory = await b.PublishAsync(topic.TopicId, Encoding.UTF8.GetBytes("""{"new":1}"""), MergePatch.MediaType).AsTask().WaitAsync(Bound);
        hold.Release();
        var published = await writing.WaitAsync(Bound);

        Assert.Equal(2, newHistory.MessageId);
        Assert.NotEqual(topic.Epoch, newHistory.Epoch);
        Assert.Equal((PublishStatus.Published, 3L, newHistory.Epoch), (published.Status, published.MessageId, published.Epoch));
        var (document, version, _) = await ReadAsync(b, topic.TopicId);
        Assert.Equal(("""{"kept":1,"new":1,"a":1}""", 3L), (document, version));
    }

    /// <summary>Instance A through the proxy, instance B straight to Redis, on one key prefix, and a state topic B created.</summary>
    private sealed class Writers(HoldingProxy proxy, string prefix, RedisStoreHandle a, RedisStoreHandle b, TopicInfo topic) : IAsyncDisposable
    {
        public HoldingProxy Proxy => proxy;

        /// <summary>The key prefix; the topic is in bucket 0 (one bucket), so its keys are <c>{Prefix}{0}t:{id}</c> (RedisScripts' remarks).</summary>
        public string Prefix => prefix;

        public ILaharsubStore A => a.Store;

        public ILaharsubStore B => b.Store;

        public TopicInfo Topic => topic;

        public static async Task<Writers> StartAsync(RedisServer redis)
        {
            var proxy = new HoldingProxy(redis.Port);
            var prefix = $"conflict-{Guid.NewGuid():N}:";
            var a = RedisStores.Create(proxy.Configuration, prefix, new LaharsubStoreOptions(), new NoSignals());
            var b = RedisStores.Create(redis.Configuration, prefix, new LaharsubStoreOptions(), new NoSignals());
            var topic = await b.Store.CreateTopicAsync(state: true).AsTask().WaitAsync(Bound);
            return new Writers(proxy, prefix, a, b, topic ?? throw new InvalidOperationException("CreateTopicAsync(state: true) returned null."));
        }

        public async ValueTask DisposeAsync()
        {
            await a.DisposeAsync();
            await b.DisposeAsync();
            await proxy.DisposeAsync();
        }
    }

    private static async Task<long> PatchAsync(ILaharsubStore store, long topicId, string patch)
    {
        var result = await store.PublishAsync(topicId, Encoding.UTF8.GetBytes(patch), MergePatch.MediaType).AsTask().WaitAsync(Bound);
        Assert.Equal(PublishStatus.Published, result.Status);
        return result.MessageId;
    }

    private static async Task<(string Document, long Version, string[] Messages)> ReadAsync(ILaharsubStore store, long topicId)
    {
        var results = new TopicReadResult[2];
        var messages = new List<Message>();
        await store.ReadAsync(new TopicReadRequest[] { new(topicId, 1, 1000, 1 << 20, WithDocument: true), new(topicId, 1, 1000, 1 << 20) }, results, messages)
            .AsTask().WaitAsync(Bound);
        Assert.Equal(results[0].LastMessageId, results[1].LastMessageId);
        return (Encoding.UTF8.GetString(results[0].Document!.Value.Span), results[0].LastMessageId,
            messages.Select(message => Encoding.UTF8.GetString(message.Body.Span)).ToArray());
    }
}
