using System.Diagnostics.CodeAnalysis;
using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Laharsub.Client.Wire;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    internal const string TextContentType = "text/plain; charset=utf-8";
    private const string JsonContentType = "application/json";

    /// <summary>Publishes bytes as one message, kept byte for byte with its content type.</summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="body">The message: at least one byte, at most the server's <c>MaxMessageBytes</c> (256 KiB by default).</param>
    /// <param name="contentType">A media type such as <c>image/png</c>; subscribers receive it unchanged.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    /// <returns>The message's topic and final id, and the topic's epoch.</returns>
    /// <exception cref="LaharsubException">The server refused: <c>404</c> unknown topic, <c>413</c> too large, ...</exception>
    public Task<PublishedMessage> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, CancellationToken cancellationToken = default) =>
        PublishAsync(topicId, body, contentType, options: null, cancellationToken);

    /// <summary>Publishes bytes as one message, kept byte for byte with its content type, under the given conditions.</summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="body">The message: at least one byte, at most the server's <c>MaxMessageBytes</c> (256 KiB by default).</param>
    /// <param name="contentType">A media type such as <c>image/png</c>; subscribers receive it unchanged.</param>
    /// <param name="options">Conditions such as <see cref="PublishOptions.ExpectedEpoch"/>; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    /// <returns>The message's topic and final id, and the topic's epoch.</returns>
    /// <exception cref="EpochMismatchException">The topic is not the incarnation <see cref="PublishOptions.ExpectedEpoch"/> names; nothing was published.</exception>
    /// <exception cref="LaharsubException">The server refused: <c>404</c> unknown topic, <c>413</c> too large, ...</exception>
    public Task<PublishedMessage> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, PublishOptions? options, CancellationToken cancellationToken = default) =>
        PublishCoreAsync(topicId, body, contentType, ValidatePublish(topicId, body, contentType, options), IdempotencyKeyFor(options), cancellationToken);

    /// <summary>The key a publish sends: the caller's, else a new random one when <see cref="LaharsubClientOptions.IdempotentPublishes"/> is on.</summary>
    internal string? IdempotencyKeyFor(PublishOptions? options) =>
        options?.IdempotencyKey ?? (_options.IdempotentPublishes ? Guid.NewGuid().ToString("D") : null);

    private static void ThrowIfBadIdempotencyKey(string? key, string parameter)
    {
        if (key is not null && (key.Length is 0 or > 255 || key.Any(c => c is < ' ' or > '~' or '"' or '\\')))
        {
            throw new ArgumentException($"'{key}' is not an idempotency key: use 1 to 255 characters of printable ASCII without quotes or backslashes, such as a UUID.",
                parameter);
        }
    }

    /// <summary>Adds the key, as the structured-field string the header's draft defines.</summary>
    private static void AddIdempotencyKey(HttpRequestMessage request, string? key)
    {
        if (key is not null)
        {
            request.Headers.TryAddWithoutValidation("Idempotency-Key", $"\"{key}\"");
        }
    }

    /// <summary>Checks a publish's arguments before anything is sent; returns the epoch it requires, if any.</summary>
    internal static string? ValidatePublish(long topicId, ReadOnlyMemory<byte> body, string contentType, PublishOptions? options)
    {
        ThrowIfNotId(topicId);
        if (body.IsEmpty)
        {
            throw new ArgumentException("The message body is empty: publish at least one byte.", nameof(body));
        }
        ArgumentException.ThrowIfNullOrWhiteSpace(contentType);
        if (!MediaTypeHeaderValue.TryParse(contentType, out _))
        {
            throw new ArgumentException($"'{contentType}' is not a media type such as text/plain or application/octet-stream.", nameof(contentType));
        }
        var expectedEpoch = options?.ExpectedEpoch;
        Epochs.ThrowIfInvalid(expectedEpoch, $"{nameof(options)}.{nameof(PublishOptions.ExpectedEpoch)}");
        ThrowIfBadIdempotencyKey(options?.IdempotencyKey, $"{nameof(options)}.{nameof(PublishOptions.IdempotencyKey)}");
        return expectedEpoch;
    }

    internal async Task<PublishedMessage> PublishCoreAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, string? expectedEpoch,
        string? idempotencyKey, CancellationToken cancellationToken)
    {
        try
        {
            return await SendAsync(api =>
            {
                var content = new ReadOnlyMemoryContent(body);
                // Sent exactly as given (already validated), since the server keeps it byte for byte.
                content.Headers.TryAddWithoutValidation("Content-Type", contentType);
                var request = new HttpRequestMessage(HttpMethod.Post, TopicUri(api, topicId)) { Content = content };
                if (expectedEpoch is not null)
                {
                    // An epoch is a valid entity tag as it is: 1 to 32 characters of [0-9A-Za-z_-].
                    request.Headers.IfMatch.Add(new EntityTagHeaderValue($"\"{expectedEpoch}\""));
                }
                AddIdempotencyKey(request, idempotencyKey);
                return request;
            }, idempotent: idempotencyKey is not null, ReadJson(ClientJsonContext.Default.PublishedMessage, Epochs.Checked), cancellationToken).ConfigureAwait(false);
        }
        catch (LaharsubException problem) when (problem.StatusCode == HttpStatusCode.PreconditionFailed && expectedEpoch is not null)
        {
            throw new EpochMismatchException(topicId, expectedEpoch, problem.ProblemEpoch, problem.Title, problem.Detail);
        }
    }

    /// <summary>Publishes text as one message with content type <c>text/plain; charset=utf-8</c>.</summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="text">The message text, not empty.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    public Task<PublishedMessage> PublishAsync(long topicId, string text, CancellationToken cancellationToken = default) =>
        PublishAsync(topicId, text, TextContentType, cancellationToken);

    /// <summary>Publishes text, encoded as UTF-8, as one message with the given content type (e.g. <c>application/json</c> for JSON you already have as text).</summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="text">The message text, not empty.</param>
    /// <param name="contentType">A media type; a textual one (<c>text/*</c>, JSON, XML) keeps the body readable in the server's JSON format.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    public Task<PublishedMessage> PublishAsync(long topicId, string text, string contentType, CancellationToken cancellationToken = default) =>
        PublishAsync(topicId, text, contentType, options: null, cancellationToken);

    /// <summary>Publishes text, encoded as UTF-8, as one message with the given content type, under the given conditions.</summary>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="text">The message text, not empty.</param>
    /// <param name="contentType">A media type, e.g. <c>text/plain; charset=utf-8</c>.</param>
    /// <param name="options">Conditions such as <see cref="PublishOptions.ExpectedEpoch"/>; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    /// <exception cref="EpochMismatchException">The topic is not the incarnation <see cref="PublishOptions.ExpectedEpoch"/> names; nothing was published.</exception>
    public Task<PublishedMessage> PublishAsync(long topicId, string text, string contentType, PublishOptions? options, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(text);
        return PublishAsync(topicId, Encoding.UTF8.GetBytes(text), contentType, options, cancellationToken);
    }

    /// <summary>Publishes a value serialized as JSON (content type <c>application/json</c>) with reflection-based System.Text.Json.</summary>
    /// <typeparam name="T">The value's type.</typeparam>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="value">The value; not <see langword="null"/>.</param>
    /// <param name="options">Serializer options; <see langword="null"/> uses <see cref="JsonSerializerDefaults.Web"/> (camelCase).</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    [RequiresUnreferencedCode("Reflection-based JSON; use the JsonTypeInfo<T> overload when trimming.")]
    [RequiresDynamicCode("Reflection-based JSON; use the JsonTypeInfo<T> overload for native AOT.")]
    public Task<PublishedMessage> PublishJsonAsync<T>(long topicId, T value, JsonSerializerOptions? options = null, CancellationToken cancellationToken = default)
    {
        ThrowIfNotId(topicId);
        ArgumentNullException.ThrowIfNull(value);
        return PublishAsync(topicId, JsonSerializer.SerializeToUtf8Bytes(value, options ?? WebJsonOptions), JsonContentType, cancellationToken);
    }

    /// <summary>Publishes a value serialized as JSON (content type <c>application/json</c>) with source-generated metadata (trimming and AOT safe).</summary>
    /// <typeparam name="T">The value's type.</typeparam>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="value">The value; not <see langword="null"/>.</param>
    /// <param name="typeInfo">The metadata of <typeparamref name="T"/>, e.g. <c>MyJsonContext.Default.Order</c>.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    public Task<PublishedMessage> PublishJsonAsync<T>(long topicId, T value, JsonTypeInfo<T> typeInfo, CancellationToken cancellationToken = default) =>
        PublishJsonAsync(topicId, value, typeInfo, options: null, cancellationToken);

    /// <summary>Publishes a value serialized as JSON with source-generated metadata, under the given conditions.</summary>
    /// <typeparam name="T">The value's type.</typeparam>
    /// <param name="topicId">The topic's id (positive).</param>
    /// <param name="value">The value; not <see langword="null"/>.</param>
    /// <param name="typeInfo">The metadata of <typeparamref name="T"/>, e.g. <c>MyJsonContext.Default.Order</c>.</param>
    /// <param name="options">Conditions such as <see cref="PublishOptions.ExpectedEpoch"/>; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the message may be stored already).</param>
    /// <exception cref="EpochMismatchException">The topic is not the incarnation <see cref="PublishOptions.ExpectedEpoch"/> names; nothing was published.</exception>
    public Task<PublishedMessage> PublishJsonAsync<T>(long topicId, T value, JsonTypeInfo<T> typeInfo, PublishOptions? options, CancellationToken cancellationToken = default)
    {
        ThrowIfNotId(topicId);
        ArgumentNullException.ThrowIfNull(value);
        ArgumentNullException.ThrowIfNull(typeInfo);
        return PublishAsync(topicId, JsonSerializer.SerializeToUtf8Bytes(value, typeInfo), JsonContentType, options, cancellationToken);
    }
}
