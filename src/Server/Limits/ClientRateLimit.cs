using System.Net;
using System.Security.Claims;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Limits;

/// <summary>
/// The token buckets of <c>Laharsub:RateLimit</c>, one per client, shared by the requests ASP.NET Core's
/// rate limiter admits (<see cref="LaharsubRateLimiterPolicy"/>), the publishes the fast path serves and the
/// publish frames of WebSockets, so that a client has one budget however it publishes and whichever path
/// serves it, and a socket is no way around it.
/// </summary>
internal sealed class ClientRateLimit : IDisposable
{
    private readonly LaharsubRateLimitOptions _limit;
    private readonly TimeProvider _time;

    /// <summary>Null when the limit is off: a partitioned limiter keeps a timer running for its buckets.</summary>
    private readonly PartitionedRateLimiter<string>? _buckets;

    public ClientRateLimit(IOptions<LaharsubRateLimitOptions> options, TimeProvider time)
    {
        _limit = options.Value;
        _time = time;
        if (Enabled)
        {
            _buckets = PartitionedRateLimiter.Create<string, string>(client => RateLimitPartition.GetTokenBucketLimiter(client, _ => new TokenBucketRateLimiterOptions
            {
                TokenLimit = Burst,
                TokensPerPeriod = _limit.RequestsPerPeriod,
                ReplenishmentPeriod = _limit.Period,
                QueueLimit = 0,
                AutoReplenishment = true,
            }));
        }
    }

    public bool Enabled => _limit.RequestsPerPeriod > 0;

    private int Burst => _limit.Burst == 0 ? _limit.RequestsPerPeriod : _limit.Burst;

    /// <summary>
    /// Takes a permit for one change by the client of <paramref name="context"/>; false, with the seconds
    /// until it may try again, when its bucket is empty. Always true when the limit is off.
    /// </summary>
    public bool TryAcquire(HttpContext context, out int retryAfterSeconds) =>
        TryAcquire(_buckets is null ? null : PartitionKey(context), out retryAfterSeconds);

    /// <summary>
    /// Takes a permit for one change by <paramref name="client"/>, a <see cref="PartitionKey(ClaimsPrincipal, IPAddress)"/>
    /// (null only while the limit is off); false, with the seconds until it may try again, when its bucket is empty.
    /// </summary>
    public bool TryAcquire(string? client, out int retryAfterSeconds)
    {
        retryAfterSeconds = 0;
        if (_buckets is null)
        {
            return true;
        }
        ArgumentNullException.ThrowIfNull(client);
        using var lease = _buckets.AttemptAcquire(client);
        if (lease.IsAcquired)
        {
            return true;
        }
        retryAfterSeconds = RetryAfterSeconds(lease);
        return false;
    }

    /// <summary>
    /// The client's bucket, as the rate limiter middleware asks a policy for it; no limit for a request whose permit
    /// the fast path drew before it handed the request over (<see cref="PermitDrawn"/>).
    /// </summary>
    public RateLimitPartition<string> Partition(HttpContext context) =>
        context.Features.Get<PermitDrawn>() is not null ? RateLimitPartition.GetNoLimiter(PermitDrawn.NoLimitKey)
        : _buckets is null ? RateLimitPartition.GetNoLimiter(PartitionKey(context))
        : RateLimitPartition.Get(PartitionKey(context), client => new MiddlewareView(this, _buckets, client));

    /// <summary>When a refused client may try again, in whole seconds (at least 1, as <c>Retry-After</c> counts).</summary>
    public int RetryAfterSeconds(RateLimitLease refused)
    {
        var wait = refused.TryGetMetadata(MetadataName.RetryAfter, out var retryAfter) ? retryAfter : _limit.Period;
        return Math.Max(1, (int)Math.Ceiling(wait.TotalSeconds));
    }

    /// <summary>The 429's problem detail, the same for a refused request and a refused WebSocket publish.</summary>
    public ProblemDetails Refusal(int retryAfterSeconds) => new()
    {
        Status = StatusCodes.Status429TooManyRequests,
        Title = "Too many requests",
        Detail = $"This client may publish, create or delete topics {_limit.RequestsPerPeriod} times per {_limit.Period} " +
            $"(bursts of {Burst}). Nothing was changed: retry after {retryAfterSeconds} s, " +
            "or ask the operator to raise Laharsub:RateLimit:RequestsPerPeriod.",
    };

    /// <summary>
    /// Who a request counts against: the token's subject when the request is authenticated (a user keeps
    /// one limit across addresses, and users behind one NAT do not share one), else the client address
    /// (the real client's behind a proxy listed in <c>Laharsub:ForwardedHeaders:KnownProxies</c>). A
    /// WebSocket's frames count against the client that opened it. The pipeline's rate limiter and the fast
    /// path both ask this, so that a client has one bucket whichever of them serves it.
    /// </summary>
    internal static string PartitionKey(ClaimsPrincipal? user, IPAddress? address)
    {
        if (user?.Identity is { IsAuthenticated: true }
            && (user.FindFirst("sub") ?? user.FindFirst(ClaimTypes.NameIdentifier))?.Value is { Length: > 0 } subject)
        {
            return "sub:" + subject;
        }
        return "ip:" + address;
    }

    private static string PartitionKey(HttpContext httpContext) => PartitionKey(httpContext.User, httpContext.Connection.RemoteIpAddress);

    public void Dispose() => _buckets?.Dispose();

    /// <summary>
    /// Marks a request whose permit the fast path drew before it handed the request to the pipeline (a publish the
    /// store refused, which the pipeline serves again): the pipeline's rate limiter does not draw a second one.
    /// Set on the features of that one request's run in Kestrel.
    /// </summary>
    internal sealed class PermitDrawn
    {
        public static readonly PermitDrawn Instance = new();

        /// <summary>The no-limit partition's own key: the middleware keeps one limiter per key, and a client's key must stay its bucket.</summary>
        internal const string NoLimitKey = "drawn";
    }

    /// <summary>
    /// One client's bucket as the rate limiter middleware holds it. The middleware keeps a limiter per
    /// partition and disposes the ones idle for a while; this one only points into the shared buckets,
    /// which stay, and is idle for as long as the middleware has not used it.
    /// </summary>
    private sealed class MiddlewareView(ClientRateLimit owner, PartitionedRateLimiter<string> buckets, string client) : RateLimiter
    {
        private long _lastUsed = owner._time.GetTimestamp();

        public override TimeSpan? IdleDuration => owner._time.GetElapsedTime(Volatile.Read(ref _lastUsed));

        public override RateLimiterStatistics? GetStatistics() => buckets.GetStatistics(client);

        protected override RateLimitLease AttemptAcquireCore(int permitCount)
        {
            Volatile.Write(ref _lastUsed, owner._time.GetTimestamp());
            return buckets.AttemptAcquire(client, permitCount);
        }

        protected override ValueTask<RateLimitLease> AcquireAsyncCore(int permitCount, CancellationToken cancellationToken)
        {
            Volatile.Write(ref _lastUsed, owner._time.GetTimestamp());
            return buckets.AcquireAsync(client, permitCount, cancellationToken);
        }
    }
}
