using Laharsub.Server.Specification;
using Laharsub.Server.Storage;
using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// The whole store specification on a 3-primary Redis Cluster, with the default single bucket: every
/// script must declare its keys and keep to one slot there, or the cluster refuses it (CROSSSLOT), and
/// changes must reach the instance by sharded pub/sub through the cluster's routing. The facts assert
/// exact MaxTopics, MaxRetainedBytes and all-or-none publishes to several topics, which hold with one
/// bucket; <see cref="RedisClusterBucketTests"/> covers 16 buckets spread over the shards.
/// </summary>
[Collection(SharedRedisCluster.Name)]
public sealed class RedisClusterStoreSpecificationTests(RedisClusterFixture cluster) : LaharsubStoreSpecification
{
    private readonly List<RedisStoreHandle> _handles = [];

    protected override TimeSpan ShortTimeToLive => TimeSpan.FromSeconds(1.5);

    protected override ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options, ITopicSignals signals)
    {
        var handle = RedisStores.Create(cluster.Cluster.Configuration, $"spec-{Guid.NewGuid():N}:", options, signals);
        _handles.Add(handle);
        return ValueTask.FromResult(handle.Store);
    }

    protected override Task LetTimePassAsync(TimeSpan time) => Task.Delay(time);

    public override async Task DisposeAsync()
    {
        await base.DisposeAsync();
        foreach (var handle in _handles)
        {
            await handle.DisposeAsync();
        }
    }
}
