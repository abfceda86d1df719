using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server;

/// <summary>
/// Caps on what one client address may hold at once, bound from <c>Laharsub:Limits</c> and validated at
/// start, so that one client cannot take every connection or every poll slot of the server. Above a cap
/// the client is answered <c>429</c> with <c>Retry-After</c>.
/// </summary>
/// <remarks>
/// A client is its IP address; IPv6 addresses count per /64 network, the block one subscriber is usually
/// given, so that one machine cannot escape the cap by changing its interface identifier. Behind a reverse
/// proxy every connection comes from the proxy: set <see cref="MaxConnectionsPerClient"/> to 0 there,
/// and apply the forwarded headers (<c>UseForwardedHeaders()</c>) so that polls are counted per real client.
/// </remarks>
public sealed class ClientLimitOptions
{
    /// <summary>The configuration section these options are bound from.</summary>
    public const string SectionName = "Laharsub:Limits";

    /// <summary>
    /// Connections one client address may hold open at once (standalone server only: the host owns the
    /// connections); 0 turns the cap off. Unset, it is half of <c>Kestrel:Limits:MaxConcurrentConnections</c>
    /// (derived from the open-file limit unless set), or <see cref="DefaultMaxConnectionsPerClient"/> where
    /// connections are not limited. With an open-file limit of 20,000 that is about 9,400: a carrier's NAT
    /// or a company's proxy puts thousands of users behind one address, each browser holding its
    /// subscription and a keep-alive connection, while one client alone still cannot take more than half of
    /// the server (docs/configuration.md, "Limits per client address", has the numbers).
    /// </summary>
    [Range(0, int.MaxValue, ErrorMessage = "Laharsub:Limits:MaxConnectionsPerClient must be 0 (no cap) or a positive number of connections.")]
    public int? MaxConnectionsPerClient { get; set; }

    /// <summary>The per-client connection cap where the server's connections are not limited at all.</summary>
    public const int DefaultMaxConnectionsPerClient = 10_000;

    /// <summary>Unset, a client address may hold this share of all connections.</summary>
    internal const int ConnectionShareDivisor = 2;

    /// <summary>
    /// Polls one client address may have waiting at once, over all its connections (HTTP/2 carries many
    /// on one); 0 turns the cap off. A page holds one subscription however many topics it follows, so this
    /// is about the number of users behind one address. 10,000 by default: a little more than one
    /// address's share of the connections (about 9,400 at an open-file limit of 20,000) can carry over
    /// HTTP/1.1, one poll each, so that there the connection cap binds; over HTTP/2, where polls share
    /// connections, it lets 10,000 users share one address.
    /// </summary>
    [Range(0, int.MaxValue, ErrorMessage = "Laharsub:Limits:MaxWaitingPollsPerClient must be 0 (no cap) or a positive number of polls.")]
    public int MaxWaitingPollsPerClient { get; set; } = 10_000;
}
