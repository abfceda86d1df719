using Laharsub.Server.Storage;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Hosting;

/// <summary>Healthy while there is room for messages; degraded when retention is nearly full (publishes will soon get 507).</summary>
internal sealed class LaharsubHealthCheck(ILaharsubBackend backend, IOptions<LaharsubOptions> options) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var retained = backend.RetainedBytes;
        var max = options.Value.MaxRetainedBytes;
        var data = new Dictionary<string, object> { ["retainedBytes"] = retained, ["maxRetainedBytes"] = max };
        return Task.FromResult(retained > max * 0.9
            ? HealthCheckResult.Degraded($"Retained messages use {retained} of {max} bytes; publishing is refused when full. Raise Laharsub:MaxRetainedBytes or lower Laharsub:MessageTimeToLive.", data: data)
            : HealthCheckResult.Healthy($"Retained messages use {retained} of {max} bytes.", data));
    }
}
