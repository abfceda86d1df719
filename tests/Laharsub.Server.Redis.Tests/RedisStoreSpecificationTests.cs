using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>The store specification (<see cref="RedisSpecification"/>) on one private redis-server.</summary>
public sealed class RedisStoreSpecificationTests(RedisStoreSpecificationTests.PrivateRedis redis)
    : RedisSpecification, IClassFixture<RedisStoreSpecificationTests.PrivateRedis>
{
    protected override string Configuration => redis.Server.Configuration;

    /// <summary>One redis-server for the class's facts.</summary>
    public sealed class PrivateRedis : PrivateFixture<RedisServer>
    {
        public RedisServer Server => Started;

        protected override Task<RedisServer> StartAsync() => RedisServer.StartAsync();
    }
}
