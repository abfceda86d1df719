using System.Globalization;
using System.Text;
using Laharsub.Client.Wire;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    /// <summary>
    /// Publishes one message to several topics in one call, all or none: when a topic is missing, forbidden or
    /// another incarnation than <see cref="PublishOptions.ExpectedEpochs"/> names, or the server has no room
    /// for every copy, nothing is published anywhere and the call throws.
    /// </summary>
    /// <param name="topicIds">The topics: distinct positive ids, at most the server's <c>MaxTopicsPerPublish</c> (100 by default).</param>
    /// <param name="body">The message: at least one byte, at most the server's <c>MaxMessageBytes</c>.</param>
    /// <param name="contentType">A media type such as <c>application/json</c>; subscribers receive it unchanged.</param>
    /// <param name="options">The topics' expected epochs and the idempotency key; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    /// <returns>Each message's topic, id and epoch, in the order of <paramref name="topicIds"/>.</returns>
    /// <exception cref="LaharsubException">
    /// The server refused, having published nothing: <c>404</c> a topic is missing, <c>412</c> another incarnation
    /// (the problem's <c>topics</c> extension names each refusing topic), <c>403</c> a topic the token may not publish to, ...
    /// </exception>
    public Task<IReadOnlyList<PublishedMessage>> PublishManyAsync(IEnumerable<long> topicIds, ReadOnlyMemory<byte> body, string contentType,
        PublishOptions? options = null, CancellationToken cancellationToken = default) =>
        PublishManyCoreAsync(ValidatePublishMany(topicIds, body, contentType, options), body, contentType, IdempotencyKeyFor(options), cancellationToken);

    /// <summary>Checks a publish to several topics before anything is sent; returns its topics as REST's <c>topics</c> query and a socket's frame name them: <c>14,15~epoch</c>.</summary>
    internal static string ValidatePublishMany(IEnumerable<long> topicIds, ReadOnlyMemory<byte> body, string contentType, PublishOptions? options)
    {
        ArgumentNullException.ThrowIfNull(topicIds);
        var ids = topicIds.ToArray();
        if (ids.Length == 0 || ids.Distinct().Count() != ids.Length)
        {
            throw new ArgumentException("Name at least one topic, and each topic once.", nameof(topicIds));
        }
        var topics = new StringBuilder();
        for (var i = 0; i < ids.Length; i++)
        {
            ValidatePublish(ids[i], body, contentType, options);
            topics.Append(i == 0 ? "" : ",").Append(ids[i].ToString(CultureInfo.InvariantCulture));
            if (options?.ExpectedEpochs is { } epochs && epochs.TryGetValue(ids[i], out var epoch))
            {
                Epochs.ThrowIfInvalid(epoch, $"{nameof(options)}.{nameof(PublishOptions.ExpectedEpochs)}[{ids[i]}]");
                topics.Append('~').Append(epoch);
            }
        }
        return topics.ToString();
    }

    /// <summary>Publishes text (UTF-8, <c>text/plain; charset=utf-8</c>) to several topics in one call, all or none.</summary>
    /// <param name="topicIds">The topics: distinct positive ids.</param>
    /// <param name="text">The message text, not empty.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    /// <returns>Each message's topic, id and epoch, in the order of <paramref name="topicIds"/>.</returns>
    public Task<IReadOnlyList<PublishedMessage>> PublishManyAsync(IEnumerable<long> topicIds, string text, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(text);
        return PublishManyAsync(topicIds, Encoding.UTF8.GetBytes(text), TextContentType, options: null, cancellationToken);
    }

    internal async Task<IReadOnlyList<PublishedMessage>> PublishManyCoreAsync(string topics, ReadOnlyMemory<byte> body, string contentType, string? key,
        CancellationToken cancellationToken)
    {
        var relative = "topics/publish?topics=" + topics;
        var answer = await SendAsync(api =>
        {
            var content = new ReadOnlyMemoryContent(body);
            content.Headers.TryAddWithoutValidation("Content-Type", contentType);
            var request = new HttpRequestMessage(HttpMethod.Post, new Uri(api, relative)) { Content = content };
            AddIdempotencyKey(request, key);
            return request;
        }, idempotent: key is not null, ReadJson(ClientJsonContext.Default.PublishedMessages, static answer => answer.Messages.ForEach(Epochs.Checked)),
            cancellationToken).ConfigureAwait(false);
        return answer.Messages;
    }
}
