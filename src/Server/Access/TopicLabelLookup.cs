using Laharsub.Server.Storage;

namespace Laharsub.Server.Access;

/// <summary>
/// Finds a topic's label for permissions given by label pattern. Asked only when no id pattern decides,
/// so tokens granting <c>*</c> or ids never cause a lookup. The one place access control reads storage.
/// </summary>
internal sealed class TopicLabelLookup(ILaharsubStore store)
{
    /// <summary>The topic's label; <see langword="null"/> when it has none or does not exist (so no label pattern matches).</summary>
    public async ValueTask<string?> GetLabelAsync(long topicId, CancellationToken cancellationToken) =>
        (await store.GetTopicAsync(topicId, cancellationToken).ConfigureAwait(false))?.Label;
}
