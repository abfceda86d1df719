using Laharsub.Server.Specification;
using Laharsub.Server.Storage;
using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// The presence specification on the Redis store, as an application gets it (<see cref="RedisStores"/>):
/// each fact's store under a key prefix of its own, and its second instance a second store (its own
/// connection) on the same prefix, as another server of the deployment.
/// </summary>
public abstract class RedisPresenceSpecification : LaharsubPresenceStoreSpecification
{
    private readonly List<(RedisStoreHandle Handle, string Prefix)> _handles = [];

    /// <summary>The StackExchange.Redis configuration string of the Redis under test.</summary>
    protected abstract string Configuration { get; }

    protected override ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options) =>
        ValueTask.FromResult(Open($"presence-{Guid.NewGuid():N}:", options));

    protected override ValueTask<ILaharsubStore> OpenAnotherInstanceAsync(ILaharsubStore store) =>
        ValueTask.FromResult(Open(_handles.Single(h => h.Handle.Store == store).Prefix, new LaharsubStoreOptions()));

    private ILaharsubStore Open(string prefix, LaharsubStoreOptions options)
    {
        var handle = RedisStores.Create(Configuration, prefix, options, new NoSignals());
        _handles.Add((handle, prefix));
        return handle.Store;
    }

    /// <summary>Disposes the stores (the base class), then the service providers that made them.</summary>
    public override async Task DisposeAsync()
    {
        await base.DisposeAsync();
        foreach (var (handle, _) in _handles)
        {
            await handle.DisposeAsync();
        }
    }
}

/// <summary>The presence specification on one private redis-server.</summary>
public sealed class RedisPresenceSpecificationTests(RedisStoreSpecificationTests.PrivateRedis redis)
    : RedisPresenceSpecification, IClassFixture<RedisStoreSpecificationTests.PrivateRedis>
{
    protected override string Configuration => redis.Server.Configuration;
}

/// <summary>
/// The presence specification on a 3-primary Redis Cluster (one bucket): every presence script must declare
/// its keys and keep to one slot, or the cluster refuses it (CROSSSLOT).
/// </summary>
[Collection(SharedRedisCluster.Name)]
public sealed class RedisClusterPresenceSpecificationTests(RedisClusterFixture cluster) : RedisPresenceSpecification
{
    protected override string Configuration => cluster.Cluster.Configuration;
}

/// <summary>
/// How a topic with presence gets its ids on Redis (docs/scale-out.md, "Presence on Redis"): a pair reserved
/// together, the companion Buckets after the topic in the same bucket, and a counter that went back (a
/// failover) skips the pairs that are taken rather than overwriting them.
/// </summary>
public sealed class RedisPresenceIdTests(RedisStoreSpecificationTests.PrivateRedis redis) : IClassFixture<RedisStoreSpecificationTests.PrivateRedis>
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(15);

    [Fact]
    public async Task ACompanionSharesItsTopicsBucketAndACounterThatWentBackSkipsTakenIds()
    {
        var prefix = $"ids-{Guid.NewGuid():N}:";
        await using var handle = RedisStores.Create(redis.Server.Configuration, prefix, new LaharsubStoreOptions(), new NoSignals(), o => o.Buckets = 3);
        var store = (IPresenceStore)handle.Store;
        var first = await store.CreateTopicWithPresenceAsync("first").AsTask().WaitAsync(Bound);
        await store.RenewAsync(first!.TopicId, "alice", null, DateTimeOffset.UtcNow.AddMinutes(1), maxMembers: 10).AsTask().WaitAsync(Bound);

        await RedisCli.RunAsync(Bound, "-p", redis.Server.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "SET", prefix + "{0}topic-ids", "0");
        var second = await store.CreateTopicWithPresenceAsync("second").AsTask().WaitAsync(Bound);

        Assert.Equal((1L, (long?)4L), (first.TopicId, first.PresenceTopicId));
        Assert.Equal((5L, (long?)8L), (second!.TopicId, second.PresenceTopicId));
        var kept = await handle.Store.GetTopicAsync(first.TopicId).AsTask().WaitAsync(Bound);
        Assert.Equal(("first", (long?)4L), (kept!.Label, kept.PresenceTopicId));
        Assert.Equal(1, (await store.ListMembersAsync(first.TopicId, null, 10).AsTask().WaitAsync(Bound))!.Occupancy);
        Assert.Equal(0, (await store.ListMembersAsync(second.TopicId, null, 10).AsTask().WaitAsync(Bound))!.Occupancy);
    }
}
