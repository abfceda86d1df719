using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server;

/// <summary>
/// Presence (docs/protocol.md, "Presence"), bound from <c>Laharsub:Presence</c>: how long a member stays
/// after its last poll or stream ends, how much data it may carry, and the optional webhook.
/// </summary>
public sealed class LaharsubPresenceOptions
{
    /// <summary>
    /// How long a member stays present after its last poll or stream on a topic ends: long enough to cover
    /// the gap between two long polls and a stream's reconnection, which then produce no events. Held polls
    /// and open streams renew their leases at least every third of it, so an instance that dies loses its members
    /// this long after their last renewal.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:01", "01:00:00")]
    public TimeSpan GracePeriod { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>The most UTF-8 bytes of a subscription's <c>member</c> data (a JSON object).</summary>
    [Range(1, 4096)]
    public int MaxMemberDataBytes { get; set; } = 256;

    /// <summary>
    /// The most members present on one topic at once. A subscription whose identity would be one more is refused
    /// (<c>409</c>, or a <c>problem</c> frame on a WebSocket) and nothing of it is stored; members already present
    /// keep renewing. Bounds what one client can make the store hold by inventing member ids.
    /// </summary>
    [Range(1, 1_000_000)]
    public int MaxMembersPerTopic { get; set; } = 10_000;

    /// <summary>
    /// How often each instance looks for expired leases and renews the leases of its held polls and streams.
    /// Leaves are announced up to this late; each expired member is announced by one instance whatever the
    /// number of instances. At most half of <see cref="GracePeriod"/>.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "00:01:00")]
    public TimeSpan SweepInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>The webhook that is told of joins, leaves, occupied and vacated topics; off unless its <c>Url</c> is set.</summary>
    public LaharsubPresenceWebhookOptions Webhook { get; set; } = new();
}

/// <summary>Presence webhooks, bound from <c>Laharsub:Presence:Webhook</c>.</summary>
public sealed class LaharsubPresenceWebhookOptions
{
    /// <summary>The absolute http or https URL that presence changes are POSTed to; none (the default) sends none.</summary>
    public Uri? Url { get; set; }

    /// <summary>The key of the HMAC-SHA256 signature in <c>Laharsub-Signature</c>; required with <see cref="Url"/>, at least 16 characters.</summary>
    public string? Secret { get; set; }

    /// <summary>The most calls waiting to be sent at one instance; beyond it new calls are dropped, logged and counted.</summary>
    [Range(1, 1_000_000)]
    public int MaxOutstanding { get; set; } = 1000;

    /// <summary>How many times one call is tried before it is dropped (logged and counted).</summary>
    [Range(1, 20)]
    public int MaxAttempts { get; set; } = 5;

    /// <summary>The wait before the first retry; each further retry waits twice as long.</summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "00:10:00")]
    public TimeSpan FirstRetryDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>How long one attempt may take.</summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:05:00")]
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>Why the settings cannot work together, or null.</summary>
    internal string? Problem() =>
        Url is null ? null
        : !Url.IsAbsoluteUri || (Url.Scheme != Uri.UriSchemeHttp && Url.Scheme != Uri.UriSchemeHttps) ? $"Laharsub:Presence:Webhook:Url '{Url}' is not an absolute http or https URL."
        : Secret is not { Length: >= 16 } ? "Laharsub:Presence:Webhook:Secret must be set, at least 16 characters, when Laharsub:Presence:Webhook:Url is: receivers check the signature."
        : null;
}
