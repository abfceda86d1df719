using System.ComponentModel.DataAnnotations;
using StackExchange.Redis;

namespace Laharsub.Server.Redis;

/// <summary>The Redis store's settings, bound from <c>Laharsub:Redis</c>.</summary>
public sealed class LaharsubRedisOptions
{
    /// <summary>The configuration section.</summary>
    public const string SectionName = "Laharsub:Redis";

    /// <summary>
    /// A StackExchange.Redis configuration string: one Redis (<c>localhost:6379</c>, <c>redis1:6379,password=...</c>),
    /// a Redis Cluster (some of its primaries, <c>redis1:6379,redis2:6379,redis3:6379</c>; the client finds the
    /// rest), or Sentinel (the sentinels and the service name, <c>sentinel1:26379,sentinel2:26379,serviceName=mymaster</c>).
    /// Required unless <see cref="ConnectionMultiplexerFactory"/> is set.
    /// </summary>
    public string Configuration { get; set; } = "";

    /// <summary>
    /// Gives the store the application's multiplexer instead of one of its own made from
    /// <see cref="Configuration"/>: called once, in the background when the store is created (start-up does
    /// not wait for the task it returns; the first commands do), and again at the next command if it threw.
    /// The store never disposes what it returns. Its configuration is the application's: Laharsub's own
    /// connection sets <c>AbortOnConnectFail=false</c> and <c>BacklogPolicy.FailFast</c>, so that the server
    /// starts while Redis is down and answers 503 at once rather than after a queue's timeout.
    /// </summary>
    public Func<Task<IConnectionMultiplexer>>? ConnectionMultiplexerFactory { get; set; }

    /// <summary>Prefix of every key and of the change channels; instances that share topics use the same one.</summary>
    [Required(AllowEmptyStrings = false)]
    [RegularExpression(@"^[A-Za-z0-9:_\-.{}]{1,64}$", ErrorMessage = "Laharsub:Redis:KeyPrefix must be 1 to 64 letters, digits or :_-.{}")]
    public string KeyPrefix { get; set; } = "laharsub:";

    /// <summary>
    /// How many buckets topics are spread over (topic id modulo this). A bucket's keys share one hash slot,
    /// so on a Redis Cluster the buckets are what spreads topics over the shards: take several per shard
    /// (16 for 3 to 5 shards). Each bucket enforces its share of <c>MaxTopics</c> and <c>MaxRetainedBytes</c>
    /// (the limit divided by this, rounded up), and a publish to several topics must name topics of one
    /// bucket; 1 (the default) keeps both exact and allows any multi-topic publish, on one Redis or in one
    /// slot of a cluster. Fixed for the life of the data: instances that share a key prefix use the same value.
    /// </summary>
    [Range(1, 16384)]
    public int Buckets { get; set; } = 1;

    /// <summary>
    /// Slots of the cache of messages this instance keeps decoded and encoded for its polls, so that a
    /// message read by many subscribers is parsed and encoded once: at most this many messages (bodies of
    /// at most 4 KiB) are kept, and at most <see cref="LocalCacheBytes"/> of memory. 0 turns the cache off.
    /// </summary>
    [Range(0, 1 << 24)]
    public int LocalCacheSize { get; set; } = 16384;

    /// <summary>
    /// Bytes of this instance's memory the cache may keep alive: each cached message's objects, its stored
    /// entry, and the wire encodings made for it, counted as <c>MaxRetainedBytes</c> counts a message in
    /// memory. A message that does not fit is served without being kept.
    /// </summary>
    [Range(0L, long.MaxValue)]
    public long LocalCacheBytes { get; set; } = 64L * 1024 * 1024;

    /// <summary>
    /// Replicas that must have a publish before it is acknowledged (Redis's <c>WAIT</c>, on the primary that
    /// took it, after the publish's script). 0 (the default): a publish is acknowledged once the primary
    /// has it, and a failover before it reached a replica may lose it (subscribers are told, docs/scale-out.md).
    /// When fewer replicas confirm within <see cref="AcknowledgeTimeout"/>, the publish answers 503: it is
    /// stored on the primary and may be delivered, so retry it with the same Idempotency-Key.
    /// </summary>
    [Range(0, 16)]
    public int AcknowledgeReplicas { get; set; }

    /// <summary>How long a publish waits for <see cref="AcknowledgeReplicas"/> replicas to confirm it; below the client's own 5 s timeout.</summary>
    [Range(typeof(TimeSpan), "00:00:00.001", "00:00:04")]
    public TimeSpan AcknowledgeTimeout { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>How long clients are told to wait (Retry-After) while Redis cannot be reached.</summary>
    [Range(typeof(TimeSpan), "00:00:01", "00:10:00")]
    public TimeSpan RetryAfter { get; set; } = TimeSpan.FromSeconds(2);
}
