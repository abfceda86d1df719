using System.Diagnostics;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Transport;

/// <summary>
/// The publish every transport shares once it has its targets, body and key: the store's all-or-none
/// publish with the key's fingerprint, counted in the publish metric unless it was a replay.
/// </summary>
internal static class StorePublish
{
    public static async ValueTask<MultiPublishResult> PublishAsync(ILaharsubStore store, LaharsubMetrics metrics, PublishTarget[] targets,
        ReadOnlyMemory<byte> body, string contentType, string? key, CancellationToken cancellationToken)
    {
        var idempotencyKey = key is null ? null : IdempotencyKeyHeader.Fingerprinted(key, targets, contentType, body.Span);
        var result = await store.PublishManyAsync(targets, body, contentType, idempotencyKey, cancellationToken).ConfigureAwait(false);
        if (result is { Status: PublishStatus.Published, Replayed: false })
        {
            for (var i = 0; i < targets.Length; i++)
            {
                metrics.Published();
            }
        }
        return result;
    }

    /// <summary>
    /// A publish to one topic, as REST, the fast path and a WebSocket frame make it: without a key the store's single
    /// publish, which costs less; with one its all-or-none publish, which records the key in the same step. A stored
    /// message is counted (a replay was, when it was stored) and recorded on <paramref name="activity"/>; a refusal
    /// carries its status, the topic's epoch and when to retry, as <see cref="PublishRefusal.For"/> reads them.
    /// </summary>
    public static async ValueTask<PublishResult> PublishOneAsync(ILaharsubStore store, LaharsubMetrics metrics, PublishTarget target,
        ReadOnlyMemory<byte> body, string contentType, string? key, Activity? activity, CancellationToken cancellationToken)
    {
        PublishResult result;
        // A compare-and-set needs the all-or-none publish, whose targets carry the version.
        if (key is null && target.IfVersion is null)
        {
            result = await store.PublishAsync(target.TopicId, body, contentType, target.IfEpoch, cancellationToken).ConfigureAwait(false);
            if (result.Status == PublishStatus.Published)
            {
                metrics.Published();
            }
        }
        else
        {
            var stored = await PublishAsync(store, metrics, [target], body, contentType, key, cancellationToken).ConfigureAwait(false);
            result = stored.Status == PublishStatus.Published ? stored.Topics[0]
                : new PublishResult(stored.Status, stored.Topics.Count > 0 ? stored.Topics[0].MessageId : 0, stored.Topics.Count > 0 ? stored.Topics[0].Epoch : null,
                    stored.RetryAfter);
        }
        if (result.Status == PublishStatus.Published)
        {
            LaharsubActivitySource.Published(activity, result.MessageId, result.Epoch!);
        }
        return result;
    }
}
