using Laharsub.Server.Storage;

namespace Laharsub.Server.Redis;

// State topics on Redis (ILaharsubStore's contract; docs/scale-out.md, "State topics on Redis"): Lua's cjson would turn {} into []
// and round large numbers, so a patch is applied in .NET, with MergePatch, and committed by RedisScripts.PublishMany only while
// each document is still the one it was applied to (CommitAsync: a compare-and-set on epoch and version); a write that lost
// the race is applied to the newer document.
internal sealed partial class RedisStore
{
    /// <inheritdoc/>
    public async ValueTask<PublishResult> ReplaceStateAsync(PublishTarget target, ReadOnlyMemory<byte> document, IdempotencyKey? idempotencyKey = null,
        CancellationToken cancellationToken = default)
    {
        if (document.Length == 0 || document.Length > _options.MaxMessageBytes)
        {
            return new PublishResult(PublishStatus.InvalidSize);
        }
        var status = MergePatch.TryReplace(document.Span, _options.MaxStateBytes, out var compact);
        if (status != PublishStatus.Published)
        {
            // What the topic is outranks what the document is (as in memory): one look more, on this refusal only.
            var info = await GetTopicAsync(target.TopicId, cancellationToken).ConfigureAwait(false);
            return info is null ? new PublishResult(PublishStatus.TopicNotFound)
                : !info.State ? new PublishResult(PublishStatus.NotAStateTopic)
                : target.IfEpoch is { } epoch && epoch != info.Epoch ? new PublishResult(PublishStatus.EpochMismatch, Epoch: info.Epoch)
                : new PublishResult(status);
        }
        return SingleResult(await CommitAsync(new[] { target }, compact, MergePatch.DocumentMediaType, WriteKind.Replace, idempotencyKey, null)
            .ConfigureAwait(false));
    }

    /// <summary>One target's answer of <see cref="CommitAsync"/>: its own result when it has one, else the publish's.</summary>
    private static PublishResult SingleResult(MultiPublishResult result) =>
        result.Topics.Count > 0 && result.Topics[0].Status != PublishStatus.NotAttempted ? result.Topics[0]
            : new PublishResult(result.Status, RetryAfter: result.RetryAfter);

    /// <summary>What a write is to a state topic's rules: an ordinary message (which a state topic refuses), a merge patch, or a whole document.</summary>
    private enum WriteKind
    {
        Message,
        Patch,
        Replace,
    }
}
