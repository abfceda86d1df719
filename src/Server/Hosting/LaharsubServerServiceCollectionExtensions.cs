using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Endpoints;
using Laharsub.Server.FastPath;
using Laharsub.Server.Hosting;
using Laharsub.Server.Limits;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Laharsub.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Cors.Infrastructure;
using Microsoft.AspNetCore.Diagnostics;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers Laharsub in an ASP.NET Core application.</summary>
public static class LaharsubServerServiceCollectionExtensions
{
    /// <summary>The CORS policy that <c>MapLaharsub</c> requires; built from <c>Laharsub:Cors</c>.</summary>
    public const string CorsPolicyName = CrossOrigin.PolicyName;

    /// <summary>
    /// Adds Laharsub's services: options bound from the <c>Laharsub</c> section and validated at start,
    /// metrics, problem details (a store outage answered 503, malformed requests with their own 4xx status), CORS, the rate limiter policy, a health check, and the in-memory store unless another
    /// <see cref="ILaharsubStore"/> is registered (before, or after through the returned builder, e.g. <c>.AddRedis()</c>).
    /// </summary>
    public static ILaharsubBuilder AddLaharsub(this IServiceCollection services, Action<LaharsubOptions>? configure = null)
    {
        var builder = new LaharsubBuilder(services);
        if (services.Any(service => service.ServiceType == typeof(LaharsubBuilder)))
        {
            // Added before (a host composition and its caller both may): only the new configuration applies.
            if (configure is not null)
            {
                services.Configure(configure);
            }
            return builder;
        }
        services.AddSingleton(builder);
        var options = services.AddOptions<LaharsubOptions>()
            .BindConfiguration(LaharsubOptions.SectionName)
            .Configure<IConfiguration>(static (options, configuration) => LaharsubCorsOptions.BindOneValue(configuration, options.Cors))
            .ValidateOnStart();
        if (configure is not null)
        {
            options.Configure(configure);
        }
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<LaharsubOptions>, LaharsubOptionsValidator>());
        // Each part is read by the code it governs, which sees only its own part (the store its limits,
        // the delivery core its caps): the parts of the one validated Laharsub section.
        services.TryAddSingleton<IOptions<LaharsubStoreOptions>>(static services => Part(services, static options => options.Store));
        services.TryAddSingleton<IOptions<LaharsubDeliveryOptions>>(static services => Part(services, static options => options.Delivery));
        services.TryAddSingleton<IOptions<LaharsubRateLimitOptions>>(static services => Part(services, static options => options.RateLimit));
        services.TryAddSingleton<IOptions<LaharsubStreamOptions>>(static services => Part(services, static options => options.Streams));
        services.TryAddSingleton<IOptions<LaharsubFastPathOptions>>(static services => Part(services, static options => options.FastPath));
        services.TryAddSingleton<IOptions<LaharsubPresenceOptions>>(static services => Part(services, static options => options.Delivery.Presence));
        services.AddClientLimits();
        services.TryAddSingleton<FastPathConnectionHandler>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<KestrelServerOptions>, ConnectionMiddlewareSetup>());

        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton<WireFormat>();
        services.TryAddSingleton<TopicSignals>();
        services.TryAddSingleton<ITopicSignals>(static services => services.GetRequiredService<TopicSignals>());
        services.TryAddSingleton<ILaharsubStore, InMemoryStore>();
        services.TryAddSingleton<SubscriptionRunner>();
        services.TryAddSingleton<PresenceMetrics>();
        services.TryAddSingleton<PresenceWebhook>();
        services.TryAddSingleton<PresenceEvents>();
        services.TryAddSingleton<PresenceLeases>();
        services.TryAddSingleton<PresenceSweeper>();
        services.AddHostedService(static services => services.GetRequiredService<PresenceWebhook>());
        services.AddHostedService(static services => services.GetRequiredService<PresenceSweeper>());
        services.AddExceptionHandler<StoreUnavailableHandler>();

        services.AddMetrics();
        services.TryAddSingleton<LaharsubMetrics>();
        services.AddProblemDetails();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IExceptionHandler, BadRequestExceptionHandler>());
        services.AddRateLimiter(limiter => limiter.AddPolicy<string, LaharsubRateLimiterPolicy>(LaharsubRateLimiterPolicy.Name));
        services.TryAddSingleton<ClientRateLimit>();
        services.TryAddSingleton<LaharsubRateLimiterPolicy.BypassWarning>();
        services.AddCors();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IConfigureOptions<CorsOptions>, ConfigureLaharsubCors>());
        services.AddHealthChecks().AddCheck<LaharsubHealthCheck>("laharsub");
        // MapHealthChecks without options of its own answers the JSON the standalone server does (each
        // check's status, description and data) rather than ASP.NET Core's one plain-text word.
        services.Configure<HealthCheckOptions>(health => health.ResponseWriter = HealthReportWriter.WriteAsync);
        services.AddLaharsubAccess();
        services.ConfigureHttpJsonOptions(json => json.SerializerOptions.TypeInfoResolverChain.Insert(0, LaharsubJsonContext.Default));
        return builder;
    }

    private static IOptions<TPart> Part<TPart>(IServiceProvider services, Func<LaharsubOptions, TPart> part) where TPart : class =>
        Microsoft.Extensions.Options.Options.Create(part(services.GetRequiredService<IOptions<LaharsubOptions>>().Value));

    private sealed class LaharsubBuilder(IServiceCollection services) : ILaharsubBuilder
    {
        public IServiceCollection Services { get; } = services;
    }

    private sealed class ConfigureLaharsubCors(IOptions<LaharsubOptions> options) : IConfigureOptions<CorsOptions>
    {
        public void Configure(CorsOptions cors) => cors.AddPolicy(CorsPolicyName, policy =>
        {
            var cors = options.Value.Cors;
            if (cors.AllowsAnyOrigin)
            {
                policy.AllowAnyOrigin();
            }
            else
            {
                policy.WithOrigins(cors.AllowedOrigins);
            }
            // No credentials mode: tokens travel in Authorization, which a page sets itself, so no cookie
            // of the user's is ever sent on a cross-origin request (docs/access-control.md).
            policy.AllowAnyHeader().AllowAnyMethod().WithExposedHeaders(CrossOrigin.ExposedHeaders);
        });
    }
}
