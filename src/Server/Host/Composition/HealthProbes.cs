using Laharsub.Server.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Diagnostics.HealthChecks;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;

namespace Laharsub.Server.Host.Composition;

/// <summary>
/// The standalone server's health endpoints: <c>/health</c>, every check with its data, for people;
/// <c>/health/live</c> and <c>/health/ready</c> for orchestrators (docs/deployment.md, "Probes").
/// </summary>
/// <remarks>
/// Liveness runs no check at all: a restart cures neither an unreachable Redis nor a full retention, and
/// restarting every instance during a Redis outage would only add to it. Readiness runs every check, so
/// a load balancer stops sending clients to an instance whose store is down or that is stopping.
/// </remarks>
internal static class HealthProbes
{
    public const string LivePath = "/health/live";
    public const string ReadyPath = "/health/ready";

    public static void AddHealthProbes(this IServiceCollection services) =>
        services.AddHealthChecks().AddCheck<StoppingHealthCheck>(StoppingHealthCheck.Name);

    public static void MapHealthProbes(this WebApplication app)
    {
        // /health as before this check existed: a stopping instance still reports on its store there.
        app.MapHealthChecks("/health", new HealthCheckOptions { Predicate = check => check.Name != StoppingHealthCheck.Name, ResponseWriter = HealthReportWriter.WriteAsync });
        app.MapHealthChecks(LivePath, new HealthCheckOptions { Predicate = _ => false, ResponseWriter = HealthReportWriter.WriteAsync });
        app.MapHealthChecks(ReadyPath, new HealthCheckOptions { ResponseWriter = HealthReportWriter.WriteAsync });
    }

    /// <summary>
    /// Unhealthy from the moment shutdown begins (SIGTERM): the instance still answers what it holds
    /// while connections drain, but new clients belong on an instance that stays.
    /// </summary>
    private sealed class StoppingHealthCheck(IHostApplicationLifetime lifetime) : IHealthCheck
    {
        public const string Name = "laharsub-stopping";

        public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default) =>
            Task.FromResult(lifetime.ApplicationStopping.IsCancellationRequested
                ? HealthCheckResult.Unhealthy("The server is stopping: it answers the clients it holds, and takes no new ones.")
                : HealthCheckResult.Healthy("Not stopping."));
    }
}
