using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server.Limits;

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
    /// connections); 0 turns the cap off. Unset, it is a tenth of <c>Kestrel:Limits:MaxConcurrentConnections</c>
    /// (derived from the open-file limit unless set), or <see cref="DefaultMaxConnectionsPerClient"/> where
    /// connections are not limited: with the default open-file limit of 20,000 that is about 1,950, enough
    /// for a NAT-ed office whose hundreds of browsers each hold a poll and a keep-alive connection, while
    /// nine tenths stay for everyone else.
    /// </summary>
    [Range(0, int.MaxValue, ErrorMessage = "Laharsub:Limits:MaxConnectionsPerClient must be 0 (no cap) or a positive number of connections.")]
    public int? MaxConnectionsPerClient { get; set; }

    /// <summary>The per-client connection cap where the server's connections are not limited at all.</summary>
    public const int DefaultMaxConnectionsPerClient = 2000;

    /// <summary>Unset, a client address may hold this share of all connections.</summary>
    internal const int ConnectionShareDivisor = 10;

    /// <summary>
    /// Polls one client address may have waiting at once, over all its connections (HTTP/2 carries many
    /// on one); 0 turns the cap off. The default leaves room for hundreds of browsers behind one address.
    /// </summary>
    [Range(0, int.MaxValue, ErrorMessage = "Laharsub:Limits:MaxWaitingPollsPerClient must be 0 (no cap) or a positive number of polls.")]
    public int MaxWaitingPollsPerClient { get; set; } = 1000;
}
