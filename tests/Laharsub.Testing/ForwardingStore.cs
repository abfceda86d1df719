using Laharsub.Server.Storage;

namespace Laharsub.Testing;

/// <summary>A store that passes every call to <paramref name="inner"/>; a test overrides the one call it watches or holds.</summary>
public abstract class ForwardingStore(ILaharsubStore inner) : ILaharsubStore
{
    protected ILaharsubStore Inner => inner;

    public virtual ValueTask<TopicInfo?> CreateTopicAsync(string? label = null, bool state = false, CancellationToken cancellationToken = default) =>
        inner.CreateTopicAsync(label, state, cancellationToken);

    public virtual ValueTask<TopicInfo?> GetTopicAsync(long topicId, CancellationToken cancellationToken = default) => inner.GetTopicAsync(topicId, cancellationToken);

    public virtual ValueTask<IReadOnlyList<TopicInfo>> ListTopicsAsync(long afterTopicId, int limit, CancellationToken cancellationToken = default) =>
        inner.ListTopicsAsync(afterTopicId, limit, cancellationToken);

    public virtual ValueTask<bool> DeleteTopicAsync(long topicId, CancellationToken cancellationToken = default) => inner.DeleteTopicAsync(topicId, cancellationToken);

    public virtual ValueTask<PublishResult> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, string? ifEpoch = null,
        CancellationToken cancellationToken = default) => inner.PublishAsync(topicId, body, contentType, ifEpoch, cancellationToken);

    public virtual ValueTask<MultiPublishResult> PublishManyAsync(ReadOnlyMemory<PublishTarget> targets, ReadOnlyMemory<byte> body, string contentType,
        IdempotencyKey? idempotencyKey = null, CancellationToken cancellationToken = default) =>
        inner.PublishManyAsync(targets, body, contentType, idempotencyKey, cancellationToken);

    public virtual ValueTask<PublishResult> ReplaceStateAsync(PublishTarget target, ReadOnlyMemory<byte> document, IdempotencyKey? idempotencyKey = null,
        CancellationToken cancellationToken = default) => inner.ReplaceStateAsync(target, document, idempotencyKey, cancellationToken);

    public virtual ValueTask ReadAsync(ReadOnlyMemory<TopicReadRequest> requests, Memory<TopicReadResult> results, List<Message> messages,
        CancellationToken cancellationToken = default) => inner.ReadAsync(requests, results, messages, cancellationToken);

    public virtual ValueTask<StoreStatistics> GetStatisticsAsync(CancellationToken cancellationToken = default) => inner.GetStatisticsAsync(cancellationToken);
}
