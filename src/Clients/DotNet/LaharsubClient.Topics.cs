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

    /// <summary>
    /// Creates a topic with a label: a name for people and for searches (<see cref="ListTopicsAsync(string, long, int, CancellationToken)"/>),
    /// not unique. Returns its id, epoch and label.
    /// </summary>
    /// <param name="label">1 to 100 characters: a letter first, then letters, digits and <c>- _ . : /</c>, e.g. <c>orders-eu</c>.</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <returns>The new topic's id, epoch and label.</returns>
    /// <exception cref="LaharsubException"><c>400</c> naming <c>label</c> when it breaks the rule above; <c>409</c> when the server holds its maximum number of topics.</exception>
    public Task<CreatedTopic> CreateTopicWithEpochAsync(string label, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(label);
        return CreateTopicAsync(new TopicDescription(label), cancellationToken);
    }

    /// <summary>Creates a topic as described; a label, when given, must not be empty.</summary>
    private Task<CreatedTopic> CreateTopicAsync(TopicDescription description, CancellationToken cancellationToken)
    {
        if (description.Label is not null)
        {
            ArgumentException.ThrowIfNullOrEmpty(description.Label, "label");
        }
        // The server checks the label's syntax and names the rule in its 400: one rule, kept there.
        return SendAsync(api => new HttpRequestMessage(HttpMethod.Post, TopicsUri(api))
        {
            Content = JsonContent.Create(description, ClientJsonContext.Default.TopicDescription),
        }, idempotent: false, ReadJson(ClientJsonContext.Default.CreatedTopic, Epochs.Checked), cancellationToken);
    }

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
    public Task<TopicPage> ListTopicsAsync(long afterTopicId = 0, int limit = 100, CancellationToken cancellationToken = default) =>
        ListTopicsCoreAsync(labelPattern: null, afterTopicId, limit, cancellationToken);

    /// <summary>Lists one page of the topics whose label matches a pattern, in id order (keyset paging).</summary>
    /// <remarks>
    /// The server scans a bounded number of topics per page, so a page may hold fewer than
    /// <paramref name="limit"/> topics, even none, while <see cref="TopicPage.HasMore"/> is still true:
    /// go on with <see cref="TopicPage.NextAfterTopicId"/> until it is false.
    /// </remarks>
    /// <param name="labelPattern">A label, or label characters with <c>*</c> standing for any run of them, e.g. <c>orders-*</c> (case-sensitive).</param>
    /// <param name="afterTopicId">Lists topics with ids above this one; 0 for the first page, <see cref="TopicPage.NextAfterTopicId"/> for the next.</param>
    /// <param name="limit">The page size, 1 to 1000.</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <exception cref="LaharsubException"><c>400</c> naming <c>label</c> when the pattern holds other characters.</exception>
    public Task<TopicPage> ListTopicsAsync(string labelPattern, long afterTopicId = 0, int limit = 100, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(labelPattern);
        return ListTopicsCoreAsync(labelPattern, afterTopicId, limit, cancellationToken);
    }

    private async Task<TopicPage> ListTopicsCoreAsync(string? labelPattern, long afterTopicId, int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(afterTopicId);
        CheckedPageSize(limit);
        var path = string.Create(CultureInfo.InvariantCulture, $"topics?after={afterTopicId}&limit={limit}");
        if (labelPattern is not null)
        {
            path += "&label=" + Uri.EscapeDataString(labelPattern);
        }
        var list = await SendAsync(api => new HttpRequestMessage(HttpMethod.Get, new Uri(api, path)), idempotent: true,
            ReadJson(ClientJsonContext.Default.TopicList, static list => list.Topics.ForEach(topic => Epochs.Checked(topic))), cancellationToken).ConfigureAwait(false);
        // A filtered page may end before the last topic scanned (or hold none): the next link says where to go on.
        return new TopicPage(list.Topics, list.Next is not null) { ScannedTo = AfterIn(list.Next) };
    }

    /// <summary>The <c>after</c> of a next link such as <c>/ps/topics?after=2&amp;limit=2</c>; <see langword="null"/> when absent.</summary>
    private static long? AfterIn(string? next)
    {
        var query = next is null ? -1 : next.IndexOf('?', StringComparison.Ordinal);
        if (query < 0)
        {
            return null;
        }
        foreach (var parameter in next![(query + 1)..].Split('&'))
        {
            if (parameter.StartsWith("after=", StringComparison.Ordinal)
                && long.TryParse(parameter.AsSpan("after=".Length), NumberStyles.None, CultureInfo.InvariantCulture, out var after))
            {
                return after;
            }
        }
        return null;
    }

    /// <summary>Lists every topic in id order, fetching pages of <paramref name="pageSize"/> as the enumeration proceeds.</summary>
    /// <param name="pageSize">Topics per request, 1 to 1000.</param>
    /// <param name="cancellationToken">Stops the enumeration.</param>
    public IAsyncEnumerable<TopicInfo> ListAllTopicsAsync(int pageSize = 100, CancellationToken cancellationToken = default) =>
        ListAllTopicsCoreAsync(labelPattern: null, CheckedPageSize(pageSize), cancellationToken);

    /// <summary>Lists every topic whose label matches a pattern, in id order, fetching pages of <paramref name="pageSize"/> as the enumeration proceeds.</summary>
    /// <param name="labelPattern">A label, or label characters with <c>*</c> standing for any run of them, e.g. <c>orders-*</c> (case-sensitive).</param>
    /// <param name="pageSize">Topics per request, 1 to 1000.</param>
    /// <param name="cancellationToken">Stops the enumeration.</param>
    public IAsyncEnumerable<TopicInfo> ListAllTopicsAsync(string labelPattern, int pageSize = 100, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(labelPattern);
        return ListAllTopicsCoreAsync(labelPattern, CheckedPageSize(pageSize), cancellationToken);
    }

    // Checked before the iterator starts, so that a bad size throws at the call.
    private static int CheckedPageSize(int pageSize, [CallerArgumentExpression(nameof(pageSize))] string? parameterName = null) => pageSize is < 1 or > MaxPageSize
        ? throw new ArgumentOutOfRangeException(parameterName, pageSize, $"The page size must be from 1 to {MaxPageSize}.")
        : pageSize;

    private async IAsyncEnumerable<TopicInfo> ListAllTopicsCoreAsync(string? labelPattern, int pageSize, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        long after = 0;
        while (true)
        {
            var page = await ListTopicsCoreAsync(labelPattern, after, pageSize, cancellationToken).ConfigureAwait(false);
            foreach (var topic in page.Topics)
            {
                yield return topic;
            }
            if (!page.HasMore || page.NextAfterTopicId <= after)
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
