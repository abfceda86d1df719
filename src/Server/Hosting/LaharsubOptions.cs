using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server.Hosting;

/// <summary>
/// Retention, limits and timeouts of a Laharsub server, bound from the <c>Laharsub</c> configuration
/// section and validated when the host starts (a bad value stops the server with a message).
/// </summary>
public sealed class LaharsubOptions
{
    /// <summary>The configuration section these options are bound from.</summary>
    public const string SectionName = "Laharsub";

    /// <summary>How long a message is retained after it is published.</summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "365.00:00:00")]
    public TimeSpan MessageTimeToLive { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>Messages retained per topic; when full, the oldest is dropped (readers behind it get a gap notice).</summary>
    [Range(1, 10_000_000)]
    public int MaxMessagesPerTopic { get; set; } = 1000;

    /// <summary>Message body bytes retained by the whole server; when full, publishing answers 507 rather than dropping anything.</summary>
    [Range(1L, long.MaxValue)]
    public long MaxRetainedBytes { get; set; } = 256L * 1024 * 1024;

    /// <summary>Largest message body accepted (413 above it).</summary>
    [Range(1, 1024 * 1024 * 1024)]
    public int MaxMessageBytes { get; set; } = 256 * 1024;

    /// <summary>Most topics that may exist at once (409 when creating more).</summary>
    [Range(1, int.MaxValue)]
    public int MaxTopics { get; set; } = 100_000;

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

    /// <summary>How often expired messages are swept from idle topics (active topics also drop them as they are used).</summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "01:00:00")]
    public TimeSpan RetentionSweepInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Deletes a topic that has had no message and no poll for this long (0, the default, keeps topics
    /// until they are deleted). Must exceed <see cref="MaxPollTimeout"/>, so that a waiting poll always
    /// counts as use. Lets abandoned topics go without anyone deleting them; together with
    /// <c>RateLimit</c> it keeps one client from filling <see cref="MaxTopics"/> for good.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00", "3650.00:00:00")]
    public TimeSpan TopicIdleTimeToLive { get; set; } = TimeSpan.Zero;

    /// <summary>Cross-origin access.</summary>
    public LaharsubCorsOptions Cors { get; set; } = new();

    /// <summary>The per-client limit on publishing, creating and deleting topics (off by default).</summary>
    public LaharsubRateLimitOptions RateLimit { get; set; } = new();
}
