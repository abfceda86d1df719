using System.Globalization;
using System.Net.Http.Json;
using System.Runtime.CompilerServices;
using System.Text.Json.Serialization.Metadata;
using Laharsub.Client.Wire;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    private const int MaxPageSize = 1000;

    /// <summary>Creates a topic.</summary>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <returns>The new topic's id.</returns>
    /// <exception cref="LaharsubException">The server refused, e.g. <c>409</c> when it holds its maximum number of topics.</exception>
    public async Task<long> CreateTopicAsync(CancellationToken cancellationToken = default) =>
        (await CreateTopicWithEpochAsync(cancellationToken).ConfigureAwait(false)).TopicId;

    /// <summary>
    /// Creates a topic and returns its id with its epoch, so that subscriptions and conditional publishes
    /// can pin this incarnation of the topic from the start.
    /// </summary>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <returns>The new topic's id and epoch.</returns>
    /// <exception cref="LaharsubException">The server refused, e.g. <c>409</c> when it holds its maximum number of topics.</exception>
    public Task<CreatedTopic> CreateTopicWithEpochAsync(CancellationToken cancellationToken = default) =>
        SendAsync(api => new HttpRequestMessage(HttpMethod.Post, TopicsUri(api)), idempotent: false,
            ReadJson(ClientJsonContext.Default.CreatedTopic, Epochs.Checked), cancellationToken);

    /// <summary>Gets a topic's current info: its last message id, what it retains, how many polls wait on it.</summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <exception cref="LaharsubException"><c>404</c> when the topic does not exist.</exception>
    public Task<TopicInfo> GetTopicAsync(long topicId, CancellationToken cancellationToken = default)
    {
        ThrowIfNotId(topicId);
        return SendAsync(api => new HttpRequestMessage(HttpMethod.Get, TopicUri(api, topicId)), idempotent: true,
            ReadJson(ClientJsonContext.Default.TopicInfo, Epochs.Checked), cancellationToken);
    }

    /// <summary>Lists one page of topics in id order (keyset paging).</summary>
    /// <param name="afterTopicId">Lists topics with ids above this one; 0 for the first page, <see cref="TopicPage.NextAfterTopicId"/> for the next.</param>
    /// <param name="limit">The page size, 1 to 1000.</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    public async Task<TopicPage> ListTopicsAsync(long afterTopicId = 0, int limit = 100, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(afterTopicId);
        if (limit is < 1 or > MaxPageSize)
        {
            throw new ArgumentOutOfRangeException(nameof(limit), limit, $"The page size must be from 1 to {MaxPageSize}.");
        }
        var path = string.Create(CultureInfo.InvariantCulture, $"topics?after={afterTopicId}&limit={limit}");
        var list = await SendAsync(api => new HttpRequestMessage(HttpMethod.Get, new Uri(api, path)), idempotent: true,
            ReadJson(ClientJsonContext.Default.TopicList, static list => list.Topics.ForEach(topic => Epochs.Checked(topic))), cancellationToken).ConfigureAwait(false);
        return new TopicPage(list.Topics, list.Next is not null);
    }

    /// <summary>Lists every topic in id order, fetching pages of <paramref name="pageSize"/> as the enumeration proceeds.</summary>
    /// <param name="pageSize">Topics per request, 1 to 1000.</param>
    /// <param name="cancellationToken">Stops the enumeration.</param>
    public IAsyncEnumerable<TopicInfo> ListAllTopicsAsync(int pageSize = 100, CancellationToken cancellationToken = default)
    {
        // Checked here rather than in the iterator, so that a bad size throws at the call.
        if (pageSize is < 1 or > MaxPageSize)
        {
            throw new ArgumentOutOfRangeException(nameof(pageSize), pageSize, $"The page size must be from 1 to {MaxPageSize}.");
        }
        return ListAllTopicsCoreAsync(pageSize, cancellationToken);
    }

    private async IAsyncEnumerable<TopicInfo> ListAllTopicsCoreAsync(int pageSize, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        long after = 0;
        while (true)
        {
            var page = await ListTopicsAsync(after, pageSize, cancellationToken).ConfigureAwait(false);
            foreach (var topic in page.Topics)
            {
                yield return topic;
            }
            if (!page.HasMore || page.Topics.Count == 0)
            {
                yield break;
            }
            after = page.NextAfterTopicId;
        }
    }

    /// <summary>Deletes a topic and its messages; its subscribers receive a <see cref="TopicDeletedNotice"/>.</summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <exception cref="LaharsubException"><c>404</c> when the topic does not exist.</exception>
    public Task DeleteTopicAsync(long topicId, CancellationToken cancellationToken = default)
    {
        ThrowIfNotId(topicId);
        return SendAsync(api => new HttpRequestMessage(HttpMethod.Delete, TopicUri(api, topicId)), idempotent: false,
            static (_, _) => Task.FromResult(true), cancellationToken);
    }

    private static Uri TopicsUri(Uri api) => new(api, "topics");

    private static Uri TopicUri(Uri api, long topicId) => new(api, "topics/" + topicId.ToString(CultureInfo.InvariantCulture));

    /// <summary>Reads a JSON answer, then lets <paramref name="check"/> refuse what the protocol does not allow.</summary>
    private static Func<HttpResponseMessage, CancellationToken, Task<T>> ReadJson<T>(JsonTypeInfo<T> typeInfo, Action<T>? check = null) =>
        async (response, cancellationToken) =>
        {
            var value = await response.Content.ReadFromJsonAsync(typeInfo, cancellationToken).ConfigureAwait(false)
                ?? throw new InvalidDataException($"Laharsub answered {(int)response.StatusCode} with an empty JSON body where a {typeof(T).Name} was expected.");
            check?.Invoke(value);
            return value;
        };
}
