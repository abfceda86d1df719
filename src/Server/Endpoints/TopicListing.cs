using Laharsub.Server.Access;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Endpoints;

/// <summary>
/// Keyset pages of <c>GET /ps/topics</c>, filtered by a label pattern and by <see cref="ITopicVisibility"/>.
/// A filtered page scans at most <see cref="MaxScannedPerPage"/> topics, so one request never walks a
/// whole large server: a page may then hold fewer topics than asked for (even none) and still have a
/// next page. Clients follow <c>next</c> until it is absent.
/// </summary>
internal static class TopicListing
{
    public const int MaxScannedPerPage = 10_000;

    /// <summary>One page, and the id to continue after when more topics may follow.</summary>
    public static async Task<(IReadOnlyList<TopicInfo> Topics, long? NextAfter)> ListAsync(ILaharsubStore store, long afterTopicId, int limit,
        string? labelPattern, ITopicVisibility? visibility, CancellationToken cancellationToken)
    {
        if (labelPattern is null && visibility is null)
        {
            var page = await store.ListTopicsAsync(afterTopicId, limit, cancellationToken).ConfigureAwait(false);
            return (page, page.Count == limit ? page[^1].TopicId : null);
        }
        var shown = new List<TopicInfo>();
        var cursor = afterTopicId;
        var scanned = 0;
        while (true)
        {
            var batch = await store.ListTopicsAsync(cursor, limit, cancellationToken).ConfigureAwait(false);
            foreach (var topic in batch)
            {
                cursor = topic.TopicId;
                scanned++;
                if ((labelPattern is null || (topic.Label is { } label && TopicLabel.Matches(labelPattern, label)))
                    && (visibility is null || await visibility.IsVisibleAsync(topic).ConfigureAwait(false)))
                {
                    shown.Add(topic);
                    if (shown.Count == limit)
                    {
                        return (shown, cursor);
                    }
                }
            }
            if (batch.Count < limit)
            {
                return (shown, null);
            }
            if (scanned >= MaxScannedPerPage)
            {
                return (shown, cursor);
            }
        }
    }
}
