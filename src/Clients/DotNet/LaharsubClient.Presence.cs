using System.Globalization;
using System.Net.Http.Json;
using System.Runtime.CompilerServices;
using Laharsub.Client.Wire;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    /// <summary>
    /// Creates a topic with presence (docs/protocol.md, "Presence"): subscriptions that identify themselves
    /// (<see cref="LaharsubSubscription.ClientId"/>, or the token's subject) are its members while they poll
    /// or stream on it, and its companion topic (<see cref="CreatedTopic.PresenceTopicId"/>) carries their
    /// joins and leaves (<see cref="PresenceEvent"/>).
    /// </summary>
    /// <param name="label">The topic's label (see <see cref="CreateTopicWithEpochAsync(string, CancellationToken)"/>), or <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <returns>The new topic's id, epoch, label and companion topic.</returns>
    /// <exception cref="LaharsubException"><c>400</c> naming <c>label</c> for a label the server refuses; <c>409</c> when the server holds its maximum number of topics.</exception>
    public Task<CreatedTopic> CreateTopicWithPresenceAsync(string? label = null, CancellationToken cancellationToken = default) =>
        CreateTopicAsync(new TopicDescription(label, Presence: true), cancellationToken);

    /// <summary>Reads one page of a topic's member list, ordered by member id, with its occupancy.</summary>
    /// <param name="topicId">The topic (the one created with presence, not its companion).</param>
    /// <param name="after">The last member id of the previous page (<see cref="PresencePage.Next"/>), or <see langword="null"/> for the first page.</param>
    /// <param name="limit">The page size, 1 to 1000.</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <exception cref="LaharsubException"><c>404</c> for an unknown topic; <c>409</c> for a topic without presence; <c>403</c> without <c>subscribe</c> or <c>presence</c> on it (Jwt mode).</exception>
    public Task<PresencePage> GetPresenceAsync(long topicId, string? after = null, int limit = 100, CancellationToken cancellationToken = default)
    {
        ThrowIfNotId(topicId);
        if (after is not null)
        {
            ArgumentException.ThrowIfNullOrEmpty(after);
        }
        CheckedPageSize(limit);
        return GetPresenceCoreAsync(topicId, after, limit, cancellationToken);
    }

    /// <summary>Lists every member of a topic, ordered by member id, fetching pages of <paramref name="pageSize"/> as the enumeration proceeds.</summary>
    /// <remarks>Members that join or leave while the pages are read may be missed or listed although gone: the list is a sequence of snapshots.</remarks>
    /// <param name="topicId">The topic (the one created with presence, not its companion).</param>
    /// <param name="pageSize">Members per request, 1 to 1000.</param>
    /// <param name="cancellationToken">Stops the enumeration.</param>
    public IAsyncEnumerable<PresenceMember> ListAllPresenceAsync(long topicId, int pageSize = 100, CancellationToken cancellationToken = default)
    {
        ThrowIfNotId(topicId);
        return ListAllPresenceCoreAsync(topicId, CheckedPageSize(pageSize), cancellationToken);
    }

    private async Task<PresencePage> GetPresenceCoreAsync(long topicId, string? after, int limit, CancellationToken cancellationToken)
    {
        var path = string.Create(CultureInfo.InvariantCulture, $"topics/{topicId}/presence?limit={limit}");
        if (after is not null)
        {
            path += "&after=" + Uri.EscapeDataString(after);
        }
        var list = await SendAsync(api => new HttpRequestMessage(HttpMethod.Get, new Uri(api, path)), idempotent: true,
            ReadJson(ClientJsonContext.Default.PresenceList), cancellationToken).ConfigureAwait(false);
        return new PresencePage(list.TopicId, list.Occupancy, list.Members ?? [], list.Next) { MembersShown = list.Members is not null };
    }

    private async IAsyncEnumerable<PresenceMember> ListAllPresenceCoreAsync(long topicId, int pageSize, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        string? after = null;
        do
        {
            var page = await GetPresenceCoreAsync(topicId, after, pageSize, cancellationToken).ConfigureAwait(false);
            foreach (var member in page.Members)
            {
                yield return member;
            }
            // A next link that does not move on would loop forever: stop instead.
            after = page.Next is not null && page.Next != after ? page.Next : null;
        }
        while (after is not null);
    }
}
