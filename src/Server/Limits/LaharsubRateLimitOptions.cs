using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server;

/// <summary>
/// A per-client limit on the requests that change state (publishing, creating and deleting topics),
/// bound from <c>Laharsub:RateLimit</c>; a publish frame on a WebSocket counts as a publish, in the same
/// budget. Polls are not limited: a long poll limits itself. Off by default.
/// </summary>
/// <remarks>
/// Clients are told apart by their token's subject when the request is authenticated (Jwt mode), else
/// by their IP address. Behind a reverse proxy that is the proxy's address, so list the proxy in
/// <c>Laharsub:ForwardedHeaders:KnownProxies</c> (a host embedding Laharsub applies
/// <c>UseForwardedHeaders()</c> and <c>UseAuthentication()</c> before the rate limiter).
/// </remarks>
public sealed class LaharsubRateLimitOptions
{
    /// <summary>Requests each client (token subject or address) may make per <see cref="Period"/> on average; 0 (the default) turns the limit off.</summary>
    [Range(0, 1_000_000)]
    public int RequestsPerPeriod { get; set; }

    /// <summary>The period over which <see cref="RequestsPerPeriod"/> is counted and replenished.</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "1.00:00:00")]
    public TimeSpan Period { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>How many requests a client may make at once after being idle; 0 (the default) means <see cref="RequestsPerPeriod"/>.</summary>
    [Range(0, 1_000_000)]
    public int Burst { get; set; }
}
