using Laharsub.Server.Storage;

namespace Laharsub.Server.Access;

/// <summary>
/// Finds a topic's label for permissions given by label pattern. Asked only when no id pattern decides,
/// so tokens granting <c>*</c> or ids never cause a lookup. The one place access control reads storage.
/// </summary>
internal sealed class TopicLabelLookup(ILaharsubStore store)
{
    // Which topics are presence companions: fixed at a topic's creation, so learnt once per id (0: none).
    private readonly System.Collections.Concurrent.ConcurrentDictionary<long, long> _owners = new();

    /// <summary>
    /// For a presence companion topic, the topic whose presence it holds; null otherwise. Asked for every topic
    /// of a poll in Jwt mode unless the token grants <c>presence</c> on every topic; cached by id, and free
    /// with a store that keeps no presence.
    /// </summary>
    public async ValueTask<long?> GetPresenceOwnerAsync(long topicId, CancellationToken cancellationToken)
    {
        if (store is not IPresenceStore)
        {
            return null;
        }
        if (!_owners.TryGetValue(topicId, out var owner))
        {
            var topic = await store.GetTopicAsync(topicId, cancellationToken).ConfigureAwait(false);
            if (topic is null)
            {
                return null;
            }
            owner = topic.PresenceOf ?? 0;
            if (_owners.Count > 200_000)
            {
                _owners.Clear();
            }
            _owners[topicId] = owner;
        }
        return owner == 0 ? null : owner;
    }

    /// <summary>The topic's label; <see langword="null"/> when it has none or does not exist (so no label pattern matches).</summary>
    public async ValueTask<string?> GetLabelAsync(long topicId, CancellationToken cancellationToken) =>
        (await store.GetTopicAsync(topicId, cancellationToken).ConfigureAwait(false))?.Label;
}
