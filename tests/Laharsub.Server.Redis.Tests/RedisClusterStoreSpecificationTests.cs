namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// The whole store specification on a 3-primary Redis Cluster, with the default single bucket: every
/// script must declare its keys and keep to one slot there, or the cluster refuses it (CROSSSLOT), and
/// changes must reach the instance by sharded pub/sub through the cluster's routing. The facts assert
/// exact MaxTopics, MaxRetainedBytes and all-or-none publishes to several topics, which hold with one
/// bucket; <see cref="RedisClusterBucketTests"/> covers 16 buckets spread over the shards.
/// </summary>
[Collection(SharedRedisCluster.Name)]
public sealed class RedisClusterStoreSpecificationTests(RedisClusterFixture cluster) : RedisSpecification
{
    protected override string Configuration => cluster.Cluster.Configuration;
}
