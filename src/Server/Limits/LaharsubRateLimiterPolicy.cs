using Microsoft.AspNetCore.Builder;
using System.Globalization;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Limits;

/// <summary>
/// ASP.NET Core's rate limiter applied to Laharsub's state-changing endpoints when
/// <see cref="LaharsubRateLimitOptions.RequestsPerPeriod"/> is set: each client's token bucket, which
/// <see cref="ClientRateLimit"/> keeps (WebSocket publishes draw on the same). A refused request gets 429 with
/// <c>Retry-After</c> and a problem detail; the policy answers for itself, so the host's own rate
/// limiter settings are left alone.
/// </summary>
internal sealed partial class LaharsubRateLimiterPolicy(ClientRateLimit limit, IProblemDetailsService problemDetails)
    : IRateLimiterPolicy<string>
{
    public const string Name = "Laharsub";

    public Func<OnRejectedContext, CancellationToken, ValueTask>? OnRejected => RejectAsync;

    public RateLimitPartition<string> GetPartition(HttpContext httpContext)
    {
        httpContext.Features.Set(RateLimiterRan.Instance);
        return limit.Partition(httpContext);
    }

    private async ValueTask RejectAsync(OnRejectedContext context, CancellationToken cancellationToken)
    {
        var response = context.HttpContext.Response;
        response.StatusCode = StatusCodes.Status429TooManyRequests;
        var seconds = limit.RetryAfterSeconds(context.Lease);
        response.Headers.RetryAfter = seconds.ToString(CultureInfo.InvariantCulture);
        await problemDetails.WriteAsync(new ProblemDetailsContext
        {
            HttpContext = context.HttpContext,
            ProblemDetails = limit.Refusal(seconds),
        }).ConfigureAwait(false);
    }

    /// <summary>
    /// Logs, once, that a request reached a rate-limited endpoint without passing ASP.NET Core's rate
    /// limiter: the host did not call <c>UseRateLimiter()</c>, so <c>Laharsub:RateLimit</c> has no effect.
    /// </summary>
    internal static ValueTask<object?> WarnIfBypassedAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        var httpContext = context.HttpContext;
        if (httpContext.Features.Get<RateLimiterRan>() is null)
        {
            httpContext.RequestServices.GetRequiredService<BypassWarning>().Log();
        }
        return next(context);
    }

    /// <summary>The mark the policy leaves on a request the rate limiter has seen.</summary>
    private sealed class RateLimiterRan
    {
        public static readonly RateLimiterRan Instance = new();
    }

    /// <summary>Remembers, per application, that the warning was given.</summary>
    internal sealed partial class BypassWarning(ILogger<LaharsubRateLimiterPolicy> logger)
    {
        private int _logged;

        public void Log()
        {
            if (Interlocked.Exchange(ref _logged, 1) == 0)
            {
                RateLimiterMissing(logger);
            }
        }
    }
}
