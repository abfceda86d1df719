using Laharsub.Server.Delivery;
using Laharsub.Server.Endpoints;
using Laharsub.Server.FastPath;
using Laharsub.Server.Limits;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;

namespace Laharsub.Server;

/// <summary>
/// The <c>Laharsub</c> configuration section as operators and hosts write it, validated when the host
/// starts (a bad value stops the server with a message). Each part is read by the code it governs:
/// <see cref="Store"/> by the store, <see cref="Delivery"/> by the delivery core, <see cref="RateLimit"/>
/// by the limits, <see cref="Cors"/> by the host's CORS policy. The flat properties are the section's
/// keys (<c>Laharsub:MaxTopics</c>), kept flat so that no setting moved when the parts were split out.
/// </summary>
public sealed class LaharsubOptions
{
    /// <summary>The configuration section these options are bound from.</summary>
    public const string SectionName = "Laharsub";

    /// <summary>Retention and store limits, as the store reads them.</summary>
    public LaharsubStoreOptions Store { get; } = new();

    /// <summary>Poll limits and timeouts, as the delivery core reads them.</summary>
    public LaharsubDeliveryOptions Delivery { get; } = new();

    /// <inheritdoc cref="LaharsubStoreOptions.MessageTimeToLive"/>
    public TimeSpan MessageTimeToLive { get => Store.MessageTimeToLive; set => Store.MessageTimeToLive = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.MaxMessagesPerTopic"/>
    public int MaxMessagesPerTopic { get => Store.MaxMessagesPerTopic; set => Store.MaxMessagesPerTopic = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.MaxRetainedBytes"/>
    public long MaxRetainedBytes { get => Store.MaxRetainedBytes; set => Store.MaxRetainedBytes = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.MaxMessageBytes"/>
    public int MaxMessageBytes { get => Store.MaxMessageBytes; set => Store.MaxMessageBytes = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.MaxTopics"/>
    public int MaxTopics { get => Store.MaxTopics; set => Store.MaxTopics = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.RetentionSweepInterval"/>
    public TimeSpan RetentionSweepInterval { get => Store.RetentionSweepInterval; set => Store.RetentionSweepInterval = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.TopicIdleTimeToLive"/>
    /// <remarks>Must exceed <see cref="MaxPollTimeout"/>, so that a waiting poll always counts as use.</remarks>
    public TimeSpan TopicIdleTimeToLive { get => Store.TopicIdleTimeToLive; set => Store.TopicIdleTimeToLive = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.MaxStateBytes"/>
    public int MaxStateBytes { get => Store.MaxStateBytes; set => Store.MaxStateBytes = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.MaxTopicsPerPublish"/>
    public int MaxTopicsPerPublish { get => Store.MaxTopicsPerPublish; set => Store.MaxTopicsPerPublish = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.IdempotencyKeyLifetime"/>
    public TimeSpan IdempotencyKeyLifetime { get => Store.IdempotencyKeyLifetime; set => Store.IdempotencyKeyLifetime = value; }

    /// <inheritdoc cref="LaharsubStoreOptions.MaxIdempotencyKeys"/>
    public int MaxIdempotencyKeys { get => Store.MaxIdempotencyKeys; set => Store.MaxIdempotencyKeys = value; }

    /// <inheritdoc cref="LaharsubDeliveryOptions.MaxSubscriptionsPerPoll"/>
    public int MaxSubscriptionsPerPoll { get => Delivery.MaxSubscriptionsPerPoll; set => Delivery.MaxSubscriptionsPerPoll = value; }

    /// <inheritdoc cref="LaharsubDeliveryOptions.DefaultPollTimeout"/>
    public TimeSpan DefaultPollTimeout { get => Delivery.DefaultPollTimeout; set => Delivery.DefaultPollTimeout = value; }

    /// <inheritdoc cref="LaharsubDeliveryOptions.MaxPollTimeout"/>
    public TimeSpan MaxPollTimeout { get => Delivery.MaxPollTimeout; set => Delivery.MaxPollTimeout = value; }

    /// <inheritdoc cref="LaharsubDeliveryOptions.MaxMessagesPerPoll"/>
    public int MaxMessagesPerPoll { get => Delivery.MaxMessagesPerPoll; set => Delivery.MaxMessagesPerPoll = value; }

    /// <inheritdoc cref="LaharsubDeliveryOptions.MaxBytesPerPoll"/>
    public int MaxBytesPerPoll { get => Delivery.MaxBytesPerPoll; set => Delivery.MaxBytesPerPoll = value; }

    /// <inheritdoc cref="LaharsubDeliveryOptions.RequireEpochForCursors"/>
    public bool RequireEpochForCursors { get => Delivery.RequireEpochForCursors; set => Delivery.RequireEpochForCursors = value; }

    /// <summary>The streaming transports (<c>Laharsub:Streams</c>).</summary>
    public LaharsubStreamOptions Streams { get; set; } = new();

    /// <summary>The connection-level fast path for polls and publishes (<c>Laharsub:FastPath</c>; off by default).</summary>
    public LaharsubFastPathOptions FastPath { get; set; } = new();

    /// <summary>Cross-origin access.</summary>
    public LaharsubCorsOptions Cors { get; set; } = new();

    /// <summary>The per-client limit on publishing, creating and deleting topics (off by default).</summary>
    public LaharsubRateLimitOptions RateLimit { get; set; } = new();

    /// <summary>Presence on the topics created with it (<c>Laharsub:Presence</c>): the grace period, member data, the webhook.</summary>
    public LaharsubPresenceOptions Presence { get => Delivery.Presence; set => Delivery.Presence = value; }
}
