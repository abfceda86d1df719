using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Limits;

/// <summary>Wires the connection and per-client limits into the services and the standalone host.</summary>
internal static class ClientLimitsExtensions
{
    /// <summary>The options and the waiting-poll cap, which every application hosting Laharsub gets.</summary>
    public static IServiceCollection AddClientLimits(this IServiceCollection services)
    {
        services.AddOptions<ClientLimitOptions>()
            .BindConfiguration(ClientLimitOptions.SectionName)
            .ValidateDataAnnotations()
            .ValidateOnStart();
        services.AddMetrics();
        services.TryAddSingleton<ClientLimitMetrics>();
        services.TryAddSingleton<WaitingPollLimit>();
        services.TryAddSingleton<ClientConnectionLimit>();
        return services;
    }

    /// <summary>
    /// The standalone server's connection limits: <c>Kestrel:Limits:MaxConcurrentConnections</c> from the
    /// open-file limit and the per-client connection cap. Registered after the <c>Kestrel</c> section is
    /// bound, so that an operator's own setting is seen and wins.
    /// </summary>
    public static void LimitConnections(this WebApplicationBuilder builder)
    {
        builder.Services.AddSingleton<IConfigureOptions<KestrelServerOptions>, ConnectionLimitSetup>();
        builder.Services.AddHostedService<ConnectionRefusalLog>();
        PaceAccepts(builder.Services);
    }

    /// <summary>
    /// Wraps the transport Kestrel was given (its socket transport, registered by the web host's
    /// defaults) so that it stops accepting at the connection limit: <see cref="PacedConnectionListenerFactory"/>.
    /// </summary>
    private static void PaceAccepts(IServiceCollection services)
    {
        var transport = services.LastOrDefault(d => d.ServiceType == typeof(IConnectionListenerFactory));
        if (transport?.ImplementationType is not { } transportType)
        {
            return;
        }
        services.Remove(transport);
        services.AddSingleton<IConnectionListenerFactory>(provider => new PacedConnectionListenerFactory(
            (IConnectionListenerFactory)ActivatorUtilities.CreateInstance(provider, transportType),
            provider.GetRequiredService<IOptions<KestrelServerOptions>>()));
    }

    /// <summary>Answers 429 on connections that were over the per-client cap when they connected.</summary>
    public static void UseClientConnectionLimit(this WebApplication app)
    {
        var limit = app.Services.GetRequiredService<ClientConnectionLimit>();
        app.Use(next => context => limit.RefuseOverLimitAsync(context, next));
    }
}
