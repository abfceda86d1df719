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
/// <item>State topics (<see cref="TopicInfo.State"/>): the document starts as <c>{}</c>, and each message is applied
/// to it in the same atomic step that assigns the message's id, with <see cref="MergePatch"/> and the limit
/// <see cref="LaharsubStoreOptions.MaxStateBytes"/>; a refused write stores nothing and changes nothing. The
/// document's version is the topic's last message id. Retention never evicts the document (messages go as for
/// any topic); it counts against <see cref="LaharsubStoreOptions.MaxRetainedBytes"/>, and a write that would
/// exceed that is <see cref="PublishStatus.StorageFull"/>.</item>
/// <item>A store that cannot reach its engine throws <see cref="LaharsubStoreUnavailableException"/>;
/// the server answers 503 with Retry-After.</item>
/// </list>
/// </remarks>
public interface ILaharsubStore
{
    /// <summary>
    /// Creates a topic, with state (<see cref="TopicInfo.State"/>, the document <c>{}</c> at version 0) when
    /// <paramref name="state"/>; <see langword="null"/> when <c>MaxTopics</c> topics already exist. A store that keeps
    /// no state topics throws <see cref="NotSupportedException"/> for <paramref name="state"/> (the server answers 400 naming <c>state</c>).
    /// </summary>
    ValueTask<TopicInfo?> CreateTopicAsync(string? label = null, bool state = false, CancellationToken cancellationToken = default);

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
    /// On a state topic the message must be a merge patch (<see cref="MergePatch.IsMergePatch"/>, else
    /// <see cref="PublishStatus.NotAPatch"/>): it is stored with the content type <see cref="MergePatch.MediaType"/> and
    /// applied to the document (<see cref="MergePatch.TryApply"/>: <see cref="PublishStatus.NotAnObject"/>,
    /// <see cref="PublishStatus.StateTooLarge"/>). On any other topic a merge patch is an ordinary message.
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
    /// Refusals are not recorded: nothing changed, so a retry may simply run again. Each state topic among the
    /// targets applies the body as <see cref="PublishAsync"/> says (a refusal of one refuses all, as any other); a
    /// target's <see cref="PublishTarget.IfVersion"/> is checked in the same step.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="targets"/> is empty, too long, or names a topic twice.</exception>
    ValueTask<MultiPublishResult> PublishManyAsync(ReadOnlyMemory<PublishTarget> targets, ReadOnlyMemory<byte> body, string contentType,
        IdempotencyKey? idempotencyKey = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Replaces the document of a state topic with <paramref name="document"/> (one JSON object, kept compact,
    /// <see cref="MergePatch.TryReplace"/>), stored as the topic's next message with the content type
    /// <see cref="MergePatch.DocumentMediaType"/> and the compact document as its body, in one atomic step; signals
    /// the topic. Refusals, storing nothing: <see cref="PublishStatus.TopicNotFound"/>, <see cref="PublishStatus.NotAStateTopic"/>,
    /// <see cref="PublishStatus.EpochMismatch"/> and <see cref="PublishStatus.VersionMismatch"/> (the target's conditions),
    /// <see cref="PublishStatus.NotAnObject"/>, <see cref="PublishStatus.StateTooLarge"/>, <see cref="PublishStatus.InvalidSize"/>
    /// (empty, or above <see cref="LaharsubStoreOptions.MaxMessageBytes"/>), <see cref="PublishStatus.StorageFull"/>, and the
    /// idempotency key statuses of <see cref="PublishManyAsync"/>, whose recording <paramref name="idempotencyKey"/> follows.
    /// </summary>
    ValueTask<PublishResult> ReplaceStateAsync(PublishTarget target, ReadOnlyMemory<byte> document, IdempotencyKey? idempotencyKey = null,
        CancellationToken cancellationToken = default);

    /// <summary>
    /// Reads several topics at once (one round trip for a networked store). For request <c>n</c>, the
    /// store writes <c>results[n]</c> and appends to <paramref name="messages"/> (after request
    /// <c>n - 1</c>'s) the retained messages with ids from <c>max(FromMessageId, firstRetained)</c> on,
    /// consecutive, stopping after <see cref="TopicReadRequest.MaxMessages"/> messages or as soon as the
    /// bodies appended for the request reach <see cref="TopicReadRequest.MaxBytes"/> (the message that
    /// reaches it is included). A request with <see cref="TopicReadRequest.WithDocument"/> on a state topic reads
    /// the document and its version instead (<see cref="TopicReadResult.Document"/>), atomically. Every result tells
    /// whether its topic holds state (<see cref="TopicReadResult.State"/>).
    /// </summary>
    ValueTask ReadAsync(ReadOnlyMemory<TopicReadRequest> requests, Memory<TopicReadResult> results, List<Message> messages,
        CancellationToken cancellationToken = default);

    /// <summary>Topic count and retained bytes, for health checks and metrics.</summary>
    ValueTask<StoreStatistics> GetStatisticsAsync(CancellationToken cancellationToken = default);
}
