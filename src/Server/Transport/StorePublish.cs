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

    /// <summary>The answer of a stored (or replayed) publish: each message, in the targets' order.</summary>
    public static PublishedMessage[] Messages(PublishTarget[] targets, MultiPublishResult result)
    {
        var messages = new PublishedMessage[targets.Length];
        for (var i = 0; i < targets.Length; i++)
        {
            messages[i] = new PublishedMessage(targets[i].TopicId, result.Topics[i].MessageId, result.Topics[i].Epoch!);
        }
        return messages;
    }
}
