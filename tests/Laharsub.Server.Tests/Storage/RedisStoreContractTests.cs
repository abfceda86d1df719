using Laharsub.Server.Delivery;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// The store contract on the Redis store, against a real private redis-server. Redis keeps time with
/// its own clock, so retention is tested with a short real time to live.
/// </summary>
public sealed class RedisStoreContractTests : StoreContractTests
{
    // Long enough that a loaded machine still reads a fresh message before it expires.
    protected override TimeSpan ShortTimeToLive => TimeSpan.FromSeconds(1.5);

    /// <summary>The store as an application gets it (AddRedis), on the shared redis-server under a key prefix of its own.</summary>
    private protected override async Task<ILaharsubStore> CreateStoreAsync(LaharsubOptions options, TopicSignals signals)
    {
        var handle = await RedisStores.CreateAsync(options.Store, signals);
        DisposeAfterTest(handle);
        return handle.Store;
    }

    protected override Task LetTimePassAsync(TimeSpan time) => Task.Delay(time);
}
