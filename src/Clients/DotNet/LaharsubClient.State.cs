using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.Json.Serialization.Metadata;
using Laharsub.Client.Wire;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    /// <summary>
    /// Creates a state topic: it holds one JSON object, the document, starting as <c>{}</c>, changed by merge
    /// patches (<see cref="PatchStateAsync(long, JsonObject, PublishOptions?, CancellationToken)"/>) and
    /// replacements (<see cref="ReplaceStateAsync(long, JsonObject, PublishOptions?, CancellationToken)"/>),
    /// each stored as the topic's next message, whose id is the document's version.
    /// </summary>
    /// <param name="label">A label (see <see cref="CreateTopicWithEpochAsync(string, CancellationToken)"/>), or <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <returns>The new topic's id and epoch, with <see cref="CreatedTopic.State"/> set.</returns>
    /// <exception cref="LaharsubException"><c>400</c> naming <c>label</c>; <c>409</c> when the server holds its maximum number of topics.</exception>
    public Task<CreatedTopic> CreateStateTopicAsync(string? label = null, CancellationToken cancellationToken = default) =>
        CreateTopicAsync(new TopicDescription(label, State: true), cancellationToken);

    /// <summary>Reads a state topic's document with its version (the <c>ETag</c> of <c>GET topics/{id}/state</c>).</summary>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <exception cref="LaharsubException"><c>404</c> when the topic does not exist or holds no state (the detail says which).</exception>
    public Task<StateSnapshot<JsonObject>> GetStateAsync(long topicId, CancellationToken cancellationToken = default) =>
        GetStateCoreAsync(topicId, async (stream, token) => await JsonNode.ParseAsync(stream, cancellationToken: token).ConfigureAwait(false) as JsonObject, cancellationToken);

    /// <summary>Reads a state topic's document as a <typeparamref name="T"/> with source-generated metadata (trimming and AOT safe), with its version.</summary>
    /// <typeparam name="T">The document's type.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="typeInfo">The metadata of <typeparamref name="T"/>, e.g. <c>MyJsonContext.Default.Quote</c>.</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <exception cref="LaharsubException"><c>404</c> when the topic does not exist or holds no state.</exception>
    public Task<StateSnapshot<T>> GetStateAsync<T>(long topicId, JsonTypeInfo<T> typeInfo, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(typeInfo);
        return GetStateCoreAsync(topicId, (stream, token) => JsonSerializer.DeserializeAsync(stream, typeInfo, token), cancellationToken);
    }

    /// <summary>Reads a state topic's document as a <typeparamref name="T"/> with reflection-based System.Text.Json, with its version.</summary>
    /// <typeparam name="T">The document's type.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="options">Serializer options; <see langword="null"/> uses <see cref="JsonSerializerDefaults.Web"/> (camelCase).</param>
    /// <param name="cancellationToken">Stops waiting for the answer.</param>
    /// <exception cref="LaharsubException"><c>404</c> when the topic does not exist or holds no state.</exception>
    [RequiresUnreferencedCode("Reflection-based JSON; use the JsonTypeInfo<T> overload when trimming.")]
    [RequiresDynamicCode("Reflection-based JSON; use the JsonTypeInfo<T> overload for native AOT.")]
    public Task<StateSnapshot<T>> GetStateAsync<T>(long topicId, JsonSerializerOptions? options = null, CancellationToken cancellationToken = default) =>
        GetStateCoreAsync(topicId, (stream, token) => JsonSerializer.DeserializeAsync<T>(stream, options ?? WebJsonOptions, token), cancellationToken);

    private Task<StateSnapshot<T>> GetStateCoreAsync<T>(long topicId, Func<Stream, CancellationToken, ValueTask<T?>> read, CancellationToken cancellationToken)
    {
        ThrowIfNotId(topicId);
        return SendAsync(api => new HttpRequestMessage(HttpMethod.Get, StateUri(api, topicId)), idempotent: true, async (response, token) =>
        {
            var (epoch, version) = StateTag(response.Headers.ETag)
                ?? throw new InvalidDataException($"The state of topic {topicId} came without an ETag \"epoch:version\" (got {response.Headers.ETag}).");
            var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
            await using (stream.ConfigureAwait(false))
            {
                var value = await read(stream, token).ConfigureAwait(false)
                    ?? throw new InvalidDataException($"The state of topic {topicId} is not a JSON object.");
                return new StateSnapshot<T>(topicId, value, version, epoch);
            }
        }, cancellationToken);
    }

    /// <summary>The epoch and version of a state's entity tag <c>"epoch:version"</c>; <see langword="null"/> when it is not one.</summary>
    internal static (string Epoch, long Version)? StateTag(EntityTagHeaderValue? tag)
    {
        var value = tag?.Tag.Trim('"');
        var colon = value?.LastIndexOf(':') ?? -1;
        if (colon <= 0)
        {
            return null;
        }
        var epoch = value![..colon];
        return Epochs.IsValid(epoch) && long.TryParse(value.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out var version)
            ? (epoch, version)
            : null;
    }

    /// <summary>
    /// Publishes an RFC 7396 merge patch to a state topic's document (content type
    /// <c>application/merge-patch+json</c>): each member sets that field, <c>null</c> removes it, an object
    /// member patches the object there. Subscribers get it as the topic's next message and apply it.
    /// </summary>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="patch">The patch, a JSON object.</param>
    /// <param name="options">Conditions: <see cref="PublishOptions.ExpectedVersion"/> for a compare-and-set, an idempotency key; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the patch may be applied already).</param>
    /// <returns>The message's id, which is the document's new version, and the topic's epoch.</returns>
    /// <exception cref="StateConflictException">A compare-and-set found the document at another version; nothing was written.</exception>
    /// <exception cref="LaharsubException">The server refused: <c>413</c> the document would be too large, <c>415</c> not a state topic, ...</exception>
    public Task<PublishedMessage> PatchStateAsync(long topicId, JsonObject patch, PublishOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(patch);
        return WriteStateAsync(topicId, replace: false, JsonSerializer.SerializeToUtf8Bytes(patch, ClientJsonContext.Default.JsonObject), options, cancellationToken);
    }

    /// <summary>
    /// Publishes a value serialized with source-generated metadata as a merge patch (see
    /// <see cref="PatchStateAsync(long, JsonObject, PublishOptions?, CancellationToken)"/>): a member written
    /// as <c>null</c> removes the field, so leave out what the patch does not change (an
    /// <see cref="System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull"/> type, or a type of the changed fields alone).
    /// </summary>
    /// <typeparam name="T">The patch's type; it must serialize as a JSON object.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="patch">The patch.</param>
    /// <param name="typeInfo">The metadata of <typeparamref name="T"/>.</param>
    /// <param name="options">Conditions; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the patch may be applied already).</param>
    /// <exception cref="StateConflictException">A compare-and-set found the document at another version; nothing was written.</exception>
    public Task<PublishedMessage> PatchStateAsync<T>(long topicId, T patch, JsonTypeInfo<T> typeInfo, PublishOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(patch);
        ArgumentNullException.ThrowIfNull(typeInfo);
        return WriteStateAsync(topicId, replace: false, JsonSerializer.SerializeToUtf8Bytes(patch, typeInfo), options, cancellationToken);
    }

    /// <summary>
    /// Publishes a value serialized with reflection-based System.Text.Json (<see cref="JsonSerializerDefaults.Web"/>:
    /// camelCase; other options through the <see cref="JsonTypeInfo{T}"/> overload) as a merge patch, e.g. an
    /// anonymous object of the fields that changed: <c>PatchStateAsync(topic, new { bid = 1.0842 })</c>. A
    /// member written as <c>null</c> removes the field.
    /// </summary>
    /// <typeparam name="T">The patch's type; it must serialize as a JSON object.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="patch">The patch.</param>
    /// <param name="options">Conditions; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the patch may be applied already).</param>
    /// <exception cref="StateConflictException">A compare-and-set found the document at another version; nothing was written.</exception>
    [RequiresUnreferencedCode("Reflection-based JSON; use the JsonTypeInfo<T> overload when trimming.")]
    [RequiresDynamicCode("Reflection-based JSON; use the JsonTypeInfo<T> overload for native AOT.")]
    public Task<PublishedMessage> PatchStateAsync<T>(long topicId, T patch, PublishOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(patch);
        return WriteStateAsync(topicId, replace: false, JsonSerializer.SerializeToUtf8Bytes(patch, WebJsonOptions), options, cancellationToken);
    }

    /// <summary>Replaces a state topic's document as a whole (<c>PUT topics/{id}/state</c>); subscribers get it as the topic's next message.</summary>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="document">The new document, a JSON object.</param>
    /// <param name="options">Conditions: <see cref="PublishOptions.ExpectedVersion"/> for a compare-and-set, an idempotency key; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the document may be replaced already).</param>
    /// <returns>The message's id, which is the document's new version, and the topic's epoch.</returns>
    /// <exception cref="StateConflictException">A compare-and-set found the document at another version; nothing was written.</exception>
    /// <exception cref="LaharsubException">The server refused: <c>413</c> too large, <c>404</c> not a state topic, ...</exception>
    public Task<PublishedMessage> ReplaceStateAsync(long topicId, JsonObject document, PublishOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(document);
        return WriteStateAsync(topicId, replace: true, JsonSerializer.SerializeToUtf8Bytes(document, ClientJsonContext.Default.JsonObject), options, cancellationToken);
    }

    /// <summary>Replaces a state topic's document with a value serialized with source-generated metadata.</summary>
    /// <typeparam name="T">The document's type; it must serialize as a JSON object.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="document">The new document.</param>
    /// <param name="typeInfo">The metadata of <typeparamref name="T"/>.</param>
    /// <param name="options">Conditions; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the document may be replaced already).</param>
    /// <exception cref="StateConflictException">A compare-and-set found the document at another version; nothing was written.</exception>
    public Task<PublishedMessage> ReplaceStateAsync<T>(long topicId, T document, JsonTypeInfo<T> typeInfo, PublishOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(document);
        ArgumentNullException.ThrowIfNull(typeInfo);
        return WriteStateAsync(topicId, replace: true, JsonSerializer.SerializeToUtf8Bytes(document, typeInfo), options, cancellationToken);
    }

    /// <summary>Replaces a state topic's document with a value serialized with reflection-based System.Text.Json (<see cref="JsonSerializerDefaults.Web"/>: camelCase).</summary>
    /// <typeparam name="T">The document's type; it must serialize as a JSON object.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="document">The new document.</param>
    /// <param name="options">Conditions; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Stops waiting for the answer (the document may be replaced already).</param>
    /// <exception cref="StateConflictException">A compare-and-set found the document at another version; nothing was written.</exception>
    [RequiresUnreferencedCode("Reflection-based JSON; use the JsonTypeInfo<T> overload when trimming.")]
    [RequiresDynamicCode("Reflection-based JSON; use the JsonTypeInfo<T> overload for native AOT.")]
    public Task<PublishedMessage> ReplaceStateAsync<T>(long topicId, T document, PublishOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(document);
        return WriteStateAsync(topicId, replace: true, JsonSerializer.SerializeToUtf8Bytes(document, WebJsonOptions), options, cancellationToken);
    }

    private async Task<PublishedMessage> WriteStateAsync(long topicId, bool replace, byte[] body, PublishOptions? options, CancellationToken cancellationToken)
    {
        var contentType = replace ? JsonContentType : JsonMergePatch.MediaType;
        var expectedEpoch = ValidatePublish(topicId, body, contentType, options);
        var expectedVersion = options?.ExpectedVersion;
        if (expectedVersion is { } required && (required < 0 || expectedEpoch is null))
        {
            throw new ArgumentException(required < 0
                ? $"{required} is not a version: a state's version is 0 or a message id."
                : "A compare-and-set on the version needs the epoch too: set PublishOptions.ExpectedEpoch (StateSnapshot.IfUnchanged() sets both).", nameof(options));
        }
        var key = IdempotencyKeyFor(options);
        try
        {
            return await SendAsync(api =>
            {
                var content = new ByteArrayContent(body);
                content.Headers.ContentType = new MediaTypeHeaderValue(contentType);
                var request = new HttpRequestMessage(replace ? HttpMethod.Put : HttpMethod.Post, replace ? StateUri(api, topicId) : TopicUri(api, topicId)) { Content = content };
                if (expectedEpoch is not null)
                {
                    request.Headers.IfMatch.Add(new EntityTagHeaderValue(expectedVersion is { } version
                        ? string.Create(CultureInfo.InvariantCulture, $"\"{expectedEpoch}:{version}\"")
                        : $"\"{expectedEpoch}\""));
                }
                AddIdempotencyKey(request, key);
                return request;
            }, idempotent: key is not null, ReadJson(ClientJsonContext.Default.PublishedMessage, Epochs.Checked), cancellationToken).ConfigureAwait(false);
        }
        catch (LaharsubException problem) when (problem.StatusCode == HttpStatusCode.PreconditionFailed && expectedEpoch is not null)
        {
            if (expectedVersion is { } version)
            {
                throw new StateConflictException(topicId, expectedEpoch, version, problem.ProblemEpoch, problem.ProblemVersion, problem.Title, problem.Detail);
            }
            throw new EpochMismatchException(topicId, expectedEpoch, problem.ProblemEpoch, problem.Title, problem.Detail);
        }
    }

    /// <summary>
    /// Follows a state topic's document, always current, as a <typeparamref name="T"/> with source-generated
    /// metadata (trimming and AOT safe): a subscription of its own asks for the document, then applies each
    /// change; <see cref="LaharsubState{T}.Changed"/> and <see cref="LaharsubState{T}.ReadChangesAsync"/>
    /// tell each change with the fields it changed. To follow several state topics (and ordinary ones) on
    /// one connection, use <see cref="LaharsubSubscription.AddState{T}(long, JsonTypeInfo{T})"/> instead.
    /// </summary>
    /// <typeparam name="T">The document's type.</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="typeInfo">The metadata of <typeparamref name="T"/>.</param>
    /// <param name="cancellationToken">Stops the view's subscription (as disposing the view does).</param>
    /// <returns>The view, already subscribing; <see cref="LaharsubState{T}.WaitForValueAsync"/> waits for the document.</returns>
    public LaharsubState<T> SubscribeState<T>(long topicId, JsonTypeInfo<T> typeInfo, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(typeInfo);
        return SubscribeStateCore(topicId, document => document.Deserialize(typeInfo), cancellationToken);
    }

    /// <summary>As <see cref="SubscribeState{T}(long, JsonTypeInfo{T}, CancellationToken)"/>, with reflection-based System.Text.Json.</summary>
    /// <typeparam name="T">The document's type (<see cref="JsonObject"/> for the JSON itself).</typeparam>
    /// <param name="topicId">The state topic's id (positive).</param>
    /// <param name="options">Serializer options; <see langword="null"/> uses <see cref="JsonSerializerDefaults.Web"/> (camelCase).</param>
    /// <param name="cancellationToken">Stops the view's subscription (as disposing the view does).</param>
    /// <returns>The view, already subscribing.</returns>
    [RequiresUnreferencedCode("Reflection-based JSON; use the JsonTypeInfo<T> overload when trimming.")]
    [RequiresDynamicCode("Reflection-based JSON; use the JsonTypeInfo<T> overload for native AOT.")]
    public LaharsubState<T> SubscribeState<T>(long topicId, JsonSerializerOptions? options = null, CancellationToken cancellationToken = default)
    {
        var serializer = options ?? WebJsonOptions;
        return SubscribeStateCore(topicId, document => document.Deserialize<T>(serializer), cancellationToken);
    }

    private LaharsubState<T> SubscribeStateCore<T>(long topicId, Func<JsonObject, T?> deserialize, CancellationToken cancellationToken)
    {
        ThrowIfNotId(topicId);
        var view = Subscribe().AddView(topicId, deserialize, ownsSubscription: true);
        view.Start(cancellationToken);
        return view;
    }

    private static Uri StateUri(Uri api, long topicId) => new(api, "topics/" + topicId.ToString(CultureInfo.InvariantCulture) + "/state");
}
