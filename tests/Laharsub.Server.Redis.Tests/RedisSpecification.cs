using Laharsub.Server.Specification;
using Laharsub.Server.Storage;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// The store specification on the Redis store, as an application gets it: <c>AddRedis</c> on an
/// <see cref="ILaharsubBuilder"/> over a service collection (<see cref="RedisStores"/>), against the Redis
/// that <see cref="Configuration"/> names, each store under a key prefix of its own so that every fact
/// starts empty. Redis keeps time with its own clock, so time passes for real.
/// </summary>
public abstract class RedisSpecification : LaharsubStoreSpecification
{
    private readonly List<RedisStoreHandle> _handles = [];

    /// <summary>The StackExchange.Redis configuration string of the Redis under test.</summary>
    protected abstract string Configuration { get; }

    /// <summary>Short, for a quick run, yet long enough that a loaded machine reads a fresh message before it expires.</summary>
    protected override TimeSpan ShortTimeToLive => TimeSpan.FromSeconds(1.5);

    protected override ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options, ITopicSignals signals)
    {
        var handle = RedisStores.Create(Configuration, $"spec-{Guid.NewGuid():N}:", options, signals);
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
}

/// <summary>Signals nobody waits for: the tests that use it read on their own.</summary>
internal sealed class NoSignals : ITopicSignals
{
    public void Signal(long topicId)
    {
    }

    public void SignalAll()
    {
    }
}
