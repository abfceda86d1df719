using Laharsub.Server.Delivery;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Storage;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// The store contract on the Redis store, against a real private redis-server. Redis keeps time with
/// its own clock, so retention is tested with a short real time to live.
/// </summary>
public sealed class RedisStoreContractTests : StoreContractTests
{
    // Long enough that a loaded machine still reads a fresh message before it expires.
    protected override TimeSpan ShortTimeToLive => TimeSpan.FromSeconds(1.5);

    private protected override async Task<ILaharsubStore> CreateStoreAsync(LaharsubOptions options, TopicSignals signals) =>
        await CreateRedisStoreAsync(options, signals, SharedRedis.UniquePrefix());

    internal static async Task<RedisStore> CreateRedisStoreAsync(LaharsubOptions options, TopicSignals signals, string prefix)
    {
        var redis = await SharedRedis.GetAsync();
        return new RedisStore(Options.Create(options.Store),
            Options.Create(new LaharsubRedisOptions { Configuration = redis.Configuration, KeyPrefix = prefix }),
            signals, TimeProvider.System, NullLogger<RedisStore>.Instance);
    }

    protected override Task LetTimePassAsync(TimeSpan time) => Task.Delay(time);
}
