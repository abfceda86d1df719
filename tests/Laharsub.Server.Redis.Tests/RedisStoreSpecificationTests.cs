using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>The store specification (<see cref="RedisSpecification"/>) on one private redis-server.</summary>
public sealed class RedisStoreSpecificationTests(RedisStoreSpecificationTests.PrivateRedis redis)
    : RedisSpecification, IClassFixture<RedisStoreSpecificationTests.PrivateRedis>
{
    protected override string Configuration => redis.Server.Configuration;

    /// <summary>
    /// One redis-server for the class's facts, stopped after the last one: not left to a handler of the
    /// test host's exit, which does not run when the test platform kills a host that is slow to end.
    /// </summary>
    public sealed class PrivateRedis : IAsyncLifetime
    {
        private RedisServer? _server;

        public RedisServer Server => _server ?? throw new InvalidOperationException("The private redis-server did not start.");

        public async Task InitializeAsync() => _server = await RedisServer.StartAsync();

        public async Task DisposeAsync()
        {
            if (_server is not null)
            {
                await _server.DisposeAsync();
            }
        }
    }
}
