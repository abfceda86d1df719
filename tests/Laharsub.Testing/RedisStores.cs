using Laharsub.Server.Redis;
using Laharsub.Server.Storage;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Testing;

/// <summary>
/// The Redis store as an application gets it, through public API only: <c>AddRedis</c> on an
/// <see cref="ILaharsubBuilder"/> over a service collection that holds the store's other dependencies
/// (its limits, the <see cref="ITopicSignals"/> it calls, the system clock, logging). Laharsub.Server.Redis
/// shows its internals to no test.
/// </summary>
public static class RedisStores
{
    /// <summary>A Redis store on the test run's shared redis-server (<see cref="SharedRedis"/>), with its own key prefix unless one is given.</summary>
    public static async Task<RedisStoreHandle> CreateAsync(LaharsubStoreOptions options, ITopicSignals signals, string? keyPrefix = null)
    {
        var redis = await SharedRedis.GetAsync().ConfigureAwait(false);
        return Create(redis.Configuration, keyPrefix ?? SharedRedis.UniquePrefix(), options, signals);
    }

    /// <summary>
    /// A Redis store on the Redis that <paramref name="configuration"/> names, with keys under
    /// <paramref name="keyPrefix"/>; <paramref name="configure"/> may change its other Redis settings, and
    /// <paramref name="logs"/>, when given, receives what the store logs.
    /// </summary>
    public static RedisStoreHandle Create(string configuration, string keyPrefix, LaharsubStoreOptions options, ITopicSignals signals,
        Action<LaharsubRedisOptions>? configure = null, ILoggerProvider? logs = null)
    {
        var services = new ServiceCollection();
        // AddRedis binds Laharsub:Redis from the application's configuration: here an empty one.
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().Build());
        services.AddSingleton(Options.Create(options));
        services.AddSingleton(signals);
        services.AddSingleton(TimeProvider.System);
        services.AddLogging(logging =>
        {
            if (logs is not null)
            {
                logging.AddProvider(logs);
            }
        });
        new Builder(services).AddRedis(redis =>
        {
            redis.Configuration = configuration;
            redis.KeyPrefix = keyPrefix;
            configure?.Invoke(redis);
        });
        var provider = services.BuildServiceProvider(new ServiceProviderOptions { ValidateOnBuild = true, ValidateScopes = true });
        return new RedisStoreHandle(provider, provider.GetRequiredService<ILaharsubStore>());
    }

    private sealed class Builder(IServiceCollection services) : ILaharsubBuilder
    {
        public IServiceCollection Services { get; } = services;
    }
}

/// <summary>A Redis store and the service provider that made it; disposing the handle disposes both.</summary>
public sealed class RedisStoreHandle(ServiceProvider provider, ILaharsubStore store) : IAsyncDisposable
{
    public ILaharsubStore Store { get; } = store;

    public ValueTask DisposeAsync() => provider.DisposeAsync();
}
