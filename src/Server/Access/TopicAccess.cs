namespace Laharsub.Server.Access;

/// <summary>
/// Whether a caller's permissions allow an operation on topics: the one decision that the pipeline's access
/// filter, the fast path and a WebSocket's frames all ask. A topic is looked up (its label, or the topic whose
/// presence it holds) only when no id pattern decides.
/// </summary>
internal sealed class TopicAccess(TopicLabelLookup labels)
{
    /// <summary>
    /// <paramref name="operation"/> (or <paramref name="alternative"/>, when it grants the same answer) on one
    /// topic; the refusal, or null when allowed.
    /// </summary>
    public async ValueTask<AccessDenial?> CheckAsync(LaharsubPermissions permissions, LaharsubOperation operation, long topicId,
        CancellationToken cancellationToken, LaharsubOperation? alternative = null)
    {
        if (permissions.AllowsById(operation, topicId) || (alternative is { } other && permissions.AllowsById(other, topicId)))
        {
            return null;
        }
        if (permissions.HasLabelPatterns(operation) || (alternative is { } second && permissions.HasLabelPatterns(second)))
        {
            var label = await labels.GetLabelAsync(topicId, cancellationToken).ConfigureAwait(false);
            if (permissions.AllowsLabel(operation, label) || (alternative is { } third && permissions.AllowsLabel(third, label)))
            {
                return null;
            }
        }
        return new AccessDenial(operation, topicId);
    }

    /// <summary>Whether every topic of a request is allowed without reading any topic (no list needed then).</summary>
    public static bool AllowsEveryTopic(LaharsubPermissions permissions, LaharsubOperation operation) =>
        permissions.AllowsEveryTopic(operation) && (operation != LaharsubOperation.Subscribe || permissions.AllowsEveryTopic(LaharsubOperation.Presence));

    /// <summary>
    /// A poll (<c>subscribe</c>) or a publish to several topics (<c>publish</c>): the operation on every topic, in
    /// the request's order; the first refusal, or null when all are allowed. Subscribing to a presence companion
    /// topic needs <c>presence</c> on its topic, since its events are who is present.
    /// </summary>
    public async ValueTask<AccessDenial?> CheckEveryAsync(LaharsubPermissions permissions, LaharsubOperation operation, IReadOnlyList<long> topicIds,
        CancellationToken cancellationToken)
    {
        if (AllowsEveryTopic(permissions, operation))
        {
            return null;
        }
        var companionsChecked = operation != LaharsubOperation.Subscribe || permissions.AllowsEveryTopic(LaharsubOperation.Presence);
        // The first forbidden topic refuses the request whole: answering for the allowed topics alone would let
        // a client believe it is subscribed (or published) to all of them.
        foreach (var topicId in topicIds)
        {
            if (!companionsChecked && await labels.GetPresenceOwnerAsync(topicId, cancellationToken).ConfigureAwait(false) is { } owner)
            {
                if (await CheckAsync(permissions, LaharsubOperation.Presence, owner, cancellationToken).ConfigureAwait(false) is { } presence)
                {
                    return presence;
                }
                continue;
            }
            if (await CheckAsync(permissions, operation, topicId, cancellationToken).ConfigureAwait(false) is { } denial)
            {
                return denial;
            }
        }
        return null;
    }
}

/// <summary>Why a request is refused: the operation its caller may not do, on this topic.</summary>
internal readonly record struct AccessDenial(LaharsubOperation Operation, long TopicId);
