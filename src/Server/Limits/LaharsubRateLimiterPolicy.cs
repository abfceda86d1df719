using System.Globalization;
using System.Security.Claims;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Limits;

/// <summary>
/// ASP.NET Core's rate limiter applied to Laharsub's state-changing endpoints when
/// <see cref="LaharsubRateLimitOptions.RequestsPerPeriod"/> is set: a token bucket per client address. A refused request gets 429 with
/// <c>Retry-After</c> and a problem detail; the policy answers for itself, so the host's own rate
/// limiter settings are left alone.
/// </summary>
internal sealed partial class LaharsubRateLimiterPolicy(IOptions<LaharsubRateLimitOptions> options, IProblemDetailsService problemDetails)
    : IRateLimiterPolicy<string>
{
    public const string Name = "Laharsub";

    private readonly LaharsubRateLimitOptions _limit = options.Value;

    private int Burst => _limit.Burst == 0 ? _limit.RequestsPerPeriod : _limit.Burst;

    public Func<OnRejectedContext, CancellationToken, ValueTask>? OnRejected => RejectAsync;

    public RateLimitPartition<string> GetPartition(HttpContext httpContext)
    {
        httpContext.Features.Set(RateLimiterRan.Instance);
        return RateLimitPartition.GetTokenBucketLimiter(PartitionKey(httpContext), _ => new TokenBucketRateLimiterOptions
        {
            TokenLimit = Burst,
            TokensPerPeriod = _limit.RequestsPerPeriod,
            ReplenishmentPeriod = _limit.Period,
            QueueLimit = 0,
            AutoReplenishment = true,
        });
    }

    /// <summary>
    /// Who a request counts against: the token's subject when the request is authenticated (a user keeps
    /// one limit across addresses, and users behind one NAT do not share one), else the client address
    /// (the real client's behind a proxy listed in <c>Laharsub:ForwardedHeaders:KnownProxies</c>).
    /// </summary>
    internal static string PartitionKey(HttpContext httpContext)
    {
        var user = httpContext.User;
        if (user.Identity is { IsAuthenticated: true }
            && (user.FindFirst("sub") ?? user.FindFirst(ClaimTypes.NameIdentifier))?.Value is { Length: > 0 } subject)
        {
            return "sub:" + subject;
        }
        return "ip:" + httpContext.Connection.RemoteIpAddress;
    }

    private async ValueTask RejectAsync(OnRejectedContext context, CancellationToken cancellationToken)
    {
        var response = context.HttpContext.Response;
        response.StatusCode = StatusCodes.Status429TooManyRequests;
        var retryAfter = context.Lease.TryGetMetadata(MetadataName.RetryAfter, out var wait) ? wait : _limit.Period;
        var seconds = Math.Max(1, (int)Math.Ceiling(retryAfter.TotalSeconds));
        response.Headers.RetryAfter = seconds.ToString(CultureInfo.InvariantCulture);
        await problemDetails.WriteAsync(new ProblemDetailsContext
        {
            HttpContext = context.HttpContext,
            ProblemDetails =
            {
                Status = StatusCodes.Status429TooManyRequests,
                Title = "Too many requests",
                Detail = $"This client may publish, create or delete topics {_limit.RequestsPerPeriod} times per {_limit.Period} " +
                    $"(bursts of {Burst}). Nothing was changed: retry after {seconds} s, " +
                    "or ask the operator to raise Laharsub:RateLimit:RequestsPerPeriod.",
            },
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

        [LoggerMessage(EventId = 10, Level = LogLevel.Warning,
            Message = "Laharsub:RateLimit is set, but requests reach Laharsub without passing the rate limiter: call app.UseRateLimiter() before app.MapLaharsub(). Until then nothing is limited.")]
        private static partial void RateLimiterMissing(ILogger logger);
    }
}
