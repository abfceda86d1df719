using Laharsub.Server.Specification;
using Laharsub.Server.Storage;
using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// The store specification on the Redis store, as an application gets it: <c>AddRedis</c> on an
/// <see cref="ILaharsubBuilder"/> over a service collection (<see cref="RedisStores"/>), against a private
/// redis-server, each store under a key prefix of its own so that every fact starts empty. Redis keeps
/// time with its own clock, so time passes for real.
/// </summary>
public sealed class RedisStoreSpecificationTests(RedisStoreSpecificationTests.PrivateRedis redis)
    : LaharsubStoreSpecification, IClassFixture<RedisStoreSpecificationTests.PrivateRedis>
{
    private readonly List<RedisStoreHandle> _handles = [];

    /// <summary>Short, for a quick run, yet long enough that a loaded machine reads a fresh message before it expires.</summary>
    protected override TimeSpan ShortTimeToLive => TimeSpan.FromSeconds(1.5);

    protected override ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options, ITopicSignals signals)
    {
        var handle = RedisStores.Create(redis.Server.Configuration, $"spec-{Guid.NewGuid():N}:", options, signals);
        _handles.Add(handle);
        return ValueTask.FromResult(handle.Store);
    }

    protected override Task LetTimePassAsync(TimeSpan time) => Task.Delay(time);

    /// <summary>Disposes the store (the base class), then the service provider that made it.</summary>
    public override async Task DisposeAsync()
    {
        await base.DisposeAsync();
        foreach (var handle in _handles)
        {
            await handle.DisposeAsync();
        }
    }

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
