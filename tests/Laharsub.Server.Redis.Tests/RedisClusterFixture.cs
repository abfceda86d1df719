using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>One private 3-primary Redis Cluster for the classes of the "redis cluster" collection.</summary>
public sealed class RedisClusterFixture : PrivateFixture<RedisCluster>
{
    public RedisCluster Cluster => Started;

    protected override Task<RedisCluster> StartAsync() => RedisCluster.StartAsync(primaries: 3);
}

[CollectionDefinition(Name)]
public sealed class SharedRedisCluster : ICollectionFixture<RedisClusterFixture>
{
    public const string Name = "redis cluster";
}
