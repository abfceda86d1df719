using Laharsub.Server.Redis;
using Laharsub.Server.Storage;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.DependencyInjection;
using StackExchange.Redis;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Chooses the Redis store: <c>services.AddLaharsub().AddRedis("localhost:6379")</c>.</summary>
public static class LaharsubRedisBuilderExtensions
{
    /// <summary>
    /// Keeps topics and messages in Redis, so that several Laharsub instances serve the same topics.
    /// Settings come from <c>Laharsub:Redis</c> (at least <c>Configuration</c>).
    /// </summary>
    public static ILaharsubBuilder AddRedis(this ILaharsubBuilder builder) => AddRedisStore(builder, configure: null);

    /// <summary>
    /// Keeps topics and messages in Redis, so that several Laharsub instances serve the same topics.
    /// Settings come from <c>Laharsub:Redis</c> and then <paramref name="configure"/>, which must leave
    /// <see cref="LaharsubRedisOptions.Configuration"/> set.
    /// </summary>
    public static ILaharsubBuilder AddRedis(this ILaharsubBuilder builder, Action<LaharsubRedisOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        return AddRedisStore(builder, configure);
    }

    private static ILaharsubBuilder AddRedisStore(ILaharsubBuilder builder, Action<LaharsubRedisOptions>? configure)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var options = builder.Services.AddOptions<LaharsubRedisOptions>()
            .BindConfiguration(LaharsubRedisOptions.SectionName)
            .ValidateDataAnnotations()
            .Validate(redis => redis.ConnectionMultiplexerFactory is not null || !string.IsNullOrWhiteSpace(redis.Configuration),
                "Laharsub:Redis:Configuration is required (a StackExchange.Redis configuration string such as localhost:6379), unless a ConnectionMultiplexerFactory gives the application's connection.")
            .ValidateOnStart();
        if (configure is not null)
        {
            options.Configure(configure);
        }
        builder.Services.Replace(ServiceDescriptor.Singleton<ILaharsubStore, RedisStore>());
        return builder;
    }

    /// <summary>Keeps topics and messages in the Redis that <paramref name="configuration"/> names (e.g. <c>localhost:6379</c>).</summary>
    public static ILaharsubBuilder AddRedis(this ILaharsubBuilder builder, string configuration) =>
        builder.AddRedis(options => options.Configuration = configuration);

    /// <summary>
    /// Keeps topics and messages in Redis through the application's <paramref name="connection"/> (which the
    /// store uses and never disposes), with the other settings from <c>Laharsub:Redis</c>.
    /// </summary>
    public static ILaharsubBuilder AddRedis(this ILaharsubBuilder builder, IConnectionMultiplexer connection)
    {
        ArgumentNullException.ThrowIfNull(connection);
        return builder.AddRedis(options => options.ConnectionMultiplexerFactory = () => Task.FromResult(connection));
    }

    /// <summary>
    /// Chooses the Redis store when <c>Laharsub:Redis:Configuration</c> is set, and leaves the in-memory
    /// store otherwise: what the standalone server does, so that it needs no setting to start.
    /// </summary>
    public static ILaharsubBuilder AddRedisIfConfigured(this ILaharsubBuilder builder, IConfiguration configuration) =>
        string.IsNullOrWhiteSpace(configuration[LaharsubRedisOptions.SectionName + ":Configuration"]) ? builder : builder.AddRedis();
}
