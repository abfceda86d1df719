using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Storage;

/// <summary>
/// Where topics and raw messages live: the seam between Laharsub and a storage engine. The endpoints,
/// the poll assembly (fair sharing, caps, notices) and the wire encoding are shared by every store, so
/// a store only keeps topics and messages, assigns ids, and tells <see cref="ITopicSignals"/> when a
/// topic changes. Register one with <c>AddLaharsub().AddRedis(...)</c> or any extension that replaces
/// this service; in-process code may resolve it to create topics and publish from C#.
/// </summary>
/// <remarks>
/// Contract for implementers (checked for every store by the specification package Laharsub.Server.Specification.Tests):
/// <list type="bullet">
/// <item>Topic ids are unique for the store's lifetime; message ids are consecutive per topic from 1,
/// assigned atomically with the append.</item>
/// <item>Every topic has an <see cref="TopicInfo.Epoch"/> fixed at creation that differs between any two
/// incarnations of a topic id (for example after the store lost its data).</item>
/// <item>After a publish or a delete is visible to <see cref="ReadAsync"/> on any instance, the store
/// calls <see cref="ITopicSignals.Signal"/> for that topic on every instance.</item>
/// <item>A store keeps <see cref="Message.PublisherTraceContext"/>, read when <see cref="PublishAsync"/> is
/// called, with the message and returns it as <see cref="Message.TraceContext"/>, so that the span of a
/// poll or stream that delivers the message links to the publish's; nothing when it is default (untraced).
/// A store that keeps none only costs the traces their links.</item>
/// <item>A store that cannot reach its engine throws <see cref="LaharsubStoreUnavailableException"/>;
/// the server answers 503 with Retry-After.</item>
/// </list>
/// </remarks>
public interface ILaharsubStore
{
    /// <summary>Creates a topic; <see langword="null"/> when <c>MaxTopics</c> topics already exist.</summary>
    ValueTask<TopicInfo?> CreateTopicAsync(string? label = null, CancellationToken cancellationToken = default);

    /// <summary>The topic's current info, or <see langword="null"/> if it does not exist.</summary>
    ValueTask<TopicInfo?> GetTopicAsync(long topicId, CancellationToken cancellationToken = default);

    /// <summary>Up to <paramref name="limit"/> topics with ids greater than <paramref name="afterTopicId"/>, in id order.</summary>
    ValueTask<IReadOnlyList<TopicInfo>> ListTopicsAsync(long afterTopicId, int limit, CancellationToken cancellationToken = default);

    /// <summary>Deletes a topic and signals it; <see langword="false"/> if it did not exist.</summary>
    ValueTask<bool> DeleteTopicAsync(long topicId, CancellationToken cancellationToken = default);

    /// <summary>
    /// Appends one message under the topic's next id and signals the topic. The body is copied, so the
    /// caller may reuse its buffer. With <paramref name="ifEpoch"/>, appends only to that incarnation of
    /// the topic (<see cref="PublishStatus.EpochMismatch"/> otherwise, nothing stored). Bad input is a
    /// status, not an exception: an empty or oversized body is <see cref="PublishStatus.InvalidSize"/>, a
    /// content type that <see cref="Message.IsValidContentType"/> refuses is <see cref="PublishStatus.InvalidContentType"/>.
    /// </summary>
    ValueTask<PublishResult> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, string? ifEpoch = null,
        CancellationToken cancellationToken = default);

    /// <summary>
    /// Appends one message to every topic of <paramref name="targets"/> (distinct ids, at most
    /// <see cref="LaharsubStoreOptions.MaxTopicsPerPublish"/>), all or none, in one step (one round trip for a
    /// networked store), and signals each topic. Any refusing target (missing, or another incarnation than
    /// its <see cref="PublishTarget.IfEpoch"/>), or too little room for every copy, stores nothing at all.
    /// With <paramref name="idempotencyKey"/>, a successful publish is recorded with the key for
    /// <see cref="LaharsubStoreOptions.IdempotencyKeyLifetime"/> in the same step; while it is recorded, the
    /// same key and fingerprint answer the recorded result (<see cref="MultiPublishResult.Replayed"/>) and store
    /// nothing, and the same key with another fingerprint is <see cref="PublishStatus.IdempotencyKeyMismatch"/>.
    /// Refusals are not recorded: nothing changed, so a retry may simply run again.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="targets"/> is empty, too long, or names a topic twice.</exception>
    ValueTask<MultiPublishResult> PublishManyAsync(ReadOnlyMemory<PublishTarget> targets, ReadOnlyMemory<byte> body, string contentType,
        IdempotencyKey? idempotencyKey = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Reads several topics at once (one round trip for a networked store). For request <c>n</c>, the
    /// store writes <c>results[n]</c> and appends to <paramref name="messages"/> (after request
    /// <c>n - 1</c>'s) the retained messages with ids from <c>max(FromMessageId, firstRetained)</c> on,
    /// consecutive, stopping after <see cref="TopicReadRequest.MaxMessages"/> messages or as soon as the
    /// bodies appended for the request reach <see cref="TopicReadRequest.MaxBytes"/> (the message that
    /// reaches it is included).
    /// </summary>
    ValueTask ReadAsync(ReadOnlyMemory<TopicReadRequest> requests, Memory<TopicReadResult> results, List<Message> messages,
        CancellationToken cancellationToken = default);

    /// <summary>Topic count and retained bytes, for health checks and metrics.</summary>
    ValueTask<StoreStatistics> GetStatisticsAsync(CancellationToken cancellationToken = default);
}
