using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server.Storage;

/// <summary>
/// What a store keeps and for how long: the settings every <see cref="ILaharsubStore"/> enforces. Set
/// through <c>LaharsubOptions</c> (the <c>Laharsub</c> configuration section, validated at start); a
/// store resolves <c>IOptions&lt;LaharsubStoreOptions&gt;</c> and reads nothing else of the host.
/// </summary>
public sealed class LaharsubStoreOptions
{
    /// <summary>How long a message is retained after it is published.</summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "365.00:00:00")]
    public TimeSpan MessageTimeToLive { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>Messages retained per topic; when full, the oldest is dropped (readers behind it get a gap notice).</summary>
    [Range(1, 10_000_000)]
    public int MaxMessagesPerTopic { get; set; } = 1000;

    /// <summary>
    /// Retained bytes of the whole server: in memory, what each retained message keeps alive (<see cref="RetainedCost"/>:
    /// body, content type, objects, wire encodings); with Redis, the bytes stored in Redis. When full,
    /// publishing answers 507 rather than dropping anything.
    /// </summary>
    [Range(1L, long.MaxValue)]
    public long MaxRetainedBytes { get; set; } = 256L * 1024 * 1024;

    /// <summary>Largest message body accepted (413 above it).</summary>
    [Range(1, 1024 * 1024 * 1024)]
    public int MaxMessageBytes { get; set; } = 256 * 1024;

    /// <summary>Most topics that may exist at once (409 when creating more).</summary>
    [Range(1, int.MaxValue)]
    public int MaxTopics { get; set; } = 100_000;

    /// <summary>
    /// How often expired messages are swept from idle topics (active topics also drop them as they are used).
    /// The Redis store checks at the same interval whether Redis lost its keys (a flush, a failover to an
    /// empty replica), so waiting subscriptions learn of it within this time.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00.010", "01:00:00")]
    public TimeSpan RetentionSweepInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// Deletes a topic that has had no message and no poll for this long (0, the default, keeps topics
    /// until they are deleted). Lets abandoned topics go without anyone deleting them; together with a
    /// rate limit it keeps one client from filling <see cref="MaxTopics"/> for good.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00", "3650.00:00:00")]
    public TimeSpan TopicIdleTimeToLive { get; set; } = TimeSpan.Zero;

    /// <summary>
    /// Largest document a state topic may hold: the UTF-8 bytes of its compact JSON. A patch or replacement that
    /// would make it larger is refused (413) and changes nothing. The document is never evicted by retention and
    /// counts against <see cref="MaxRetainedBytes"/>.
    /// </summary>
    [Range(2, 64 * 1024 * 1024)]
    public int MaxStateBytes { get; set; } = 64 * 1024;

    /// <summary>Most topics one publish may name (<c>POST /topics/publish?topics=...</c>); more is a 400 naming <c>topics</c>.</summary>
    [Range(1, 1000)]
    public int MaxTopicsPerPublish { get; set; } = 100;

    /// <summary>
    /// How long a publish's <c>Idempotency-Key</c> is remembered with its answer: a retry with the same key
    /// within this time gets the first answer and publishes nothing. Longer than any client's retrying.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:01", "1.00:00:00")]
    public TimeSpan IdempotencyKeyLifetime { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>
    /// Most idempotency keys the in-memory store remembers at once (their bytes also count against
    /// <see cref="MaxRetainedBytes"/>); a publish with a new key beyond it is refused with 507. The Redis store
    /// keeps its keys in Redis, bounded by their lifetime and Redis's maxmemory.
    /// </summary>
    [Range(1, 100_000_000)]
    public int MaxIdempotencyKeys { get; set; } = 1_000_000;
}
