using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// One private 3-primary Redis Cluster for the classes of the "redis cluster" collection, stopped after
/// the last of them. It fails the facts, saying why, when it cannot start.
/// </summary>
public sealed class RedisClusterFixture : IAsyncLifetime
{
    private RedisCluster? _cluster;

    public RedisCluster Cluster => _cluster ?? throw new InvalidOperationException("The private Redis Cluster did not start.");

    public async Task InitializeAsync() => _cluster = await RedisCluster.StartAsync(primaries: 3);

    public async Task DisposeAsync()
    {
        if (_cluster is not null)
        {
            await _cluster.DisposeAsync();
        }
    }
}

[CollectionDefinition(Name)]
public sealed class SharedRedisCluster : ICollectionFixture<RedisClusterFixture>
{
    public const string Name = "redis cluster";
}
