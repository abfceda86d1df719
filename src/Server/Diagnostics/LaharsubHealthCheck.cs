using Laharsub.Server.Storage;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Diagnostics;

/// <summary>
/// Healthy while the store answers and there is room for messages; degraded when retention is nearly
/// full (publishes will soon get 507); unhealthy when the store cannot be reached.
/// </summary>
internal sealed class LaharsubHealthCheck(ILaharsubStore store, IOptions<LaharsubStoreOptions> options) : IHealthCheck
{
    public async Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        StoreStatistics statistics;
        try
        {
            statistics = await store.GetStatisticsAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (LaharsubStoreUnavailableException exception)
        {
            return HealthCheckResult.Unhealthy($"{exception.StoreName} unavailable: {exception.Message}", exception);
        }
        var retained = statistics.RetainedBytes;
        var max = options.Value.MaxRetainedBytes;
        var data = new Dictionary<string, object> { ["retainedBytes"] = retained, ["maxRetainedBytes"] = max, ["topics"] = statistics.TopicCount };
        return retained > max * 0.9
            ? HealthCheckResult.Degraded($"Retained messages use {retained} of {max} bytes; publishing is refused when full. Raise Laharsub:MaxRetainedBytes or lower Laharsub:MessageTimeToLive.", data: data)
            : HealthCheckResult.Healthy($"Retained messages use {retained} of {max} bytes.", data);
    }
}
