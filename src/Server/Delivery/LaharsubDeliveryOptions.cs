using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server;

/// <summary>
/// How much one subscription may ask for and receive at once, and how long a poll waits: the settings the
/// delivery core reads. Set through <c>LaharsubOptions</c> (the <c>Laharsub</c> configuration section).
/// </summary>
public sealed class LaharsubDeliveryOptions
{
    /// <summary>Most subscriptions in one poll (400 above it).</summary>
    [Range(1, 100_000)]
    public int MaxSubscriptionsPerPoll { get; set; } = 1000;

    /// <summary>How long a poll waits when it does not name a <c>timeout</c>.</summary>
    [Range(typeof(TimeSpan), "00:00:00", "01:00:00")]
    public TimeSpan DefaultPollTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>The largest <c>timeout</c> a poll may ask for.</summary>
    [Range(typeof(TimeSpan), "00:00:00", "01:00:00")]
    public TimeSpan MaxPollTimeout { get; set; } = TimeSpan.FromMinutes(2);

    /// <summary>Most messages in one poll response; the client polls again for the rest.</summary>
    [Range(1, 1_000_000)]
    public int MaxMessagesPerPoll { get; set; } = 1000;

    /// <summary>Most message body bytes in one poll response (one message is always delivered, however large).</summary>
    [Range(1, int.MaxValue)]
    public int MaxBytesPerPoll { get; set; } = 1024 * 1024;

    /// <summary>
    /// Whether a cursor above 1 must carry its topic's epoch (<c>14:6~epoch</c>); a bare one is refused
    /// with 400. Off by default, for clients written before epochs. On, a bare cursor can never skip
    /// messages of a topic that was re-created after a restart, because the server could not tell.
    /// </summary>
    public bool RequireEpochForCursors { get; set; }

    /// <summary>Presence: the grace period, member data and the webhook (<c>Laharsub:Presence</c>).</summary>
    public LaharsubPresenceOptions Presence { get; set; } = new();
}
