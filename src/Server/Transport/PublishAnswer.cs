using System.Buffers;
using System.IO.Pipelines;
using System.Text.Json;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Transport;

/// <summary>
/// A publish's success, as every front-end answers it: REST's <c>201</c> on the pipeline (<see cref="WriteAsync"/>), the
/// same <c>201</c> as the fast path's prepared bytes (from <see cref="Json"/> and <see cref="EntityTag"/>), and a WebSocket's
/// <c>published</c> frame, which carries the same fields (<see cref="WriteFields"/>). What the store's success records (the
/// metric, the publish activity's tags) is <see cref="StorePublish"/>'s.
/// </summary>
internal readonly struct PublishAnswer
{
    /// <summary>The status of REST's answer.</summary>
    public const int StatusCode = StatusCodes.Status201Created;

    /// <summary>The content type of REST's answer.</summary>
    public const string ContentType = WireFormat.JsonContentType;

    private readonly long _topicId;
    private readonly long _messageId;
    private readonly string? _epoch;
    // A publish to several topics: its targets and the store's answer for each, in the same order.
    private readonly PublishTarget[]? _targets;
    private readonly IReadOnlyList<PublishResult>? _stored;

    private PublishAnswer(long topicId, long messageId, string? epoch, PublishTarget[]? targets, IReadOnlyList<PublishResult>? stored)
    {
        _topicId = topicId;
        _messageId = messageId;
        _epoch = epoch;
        _targets = targets;
        _stored = stored;
    }

    /// <summary>A publish to one topic, stored (or replayed) as <paramref name="published"/>.</summary>
    public static PublishAnswer One(long topicId, PublishResult published) => new(topicId, published.MessageId, published.Epoch!, null, null);

    /// <summary>A publish to several topics: each message, in the targets' order.</summary>
    public static PublishAnswer Many(PublishTarget[] targets, MultiPublishResult stored) => new(0, 0, null, targets, stored.Topics);

    /// <summary>
    /// REST's <c>ETag</c>: one topic's epoch, or, for a merge patch, the version it made (on a state topic its document's;
    /// on another its last message id); none for a publish to several topics, which has an epoch per topic.
    /// </summary>
    public string? EntityTag(string contentType) =>
        _targets is not null ? null
        : MergePatch.IsMergePatch(contentType) ? TopicTags.State(_epoch!, _messageId)
        : TopicTags.Epoch(_epoch!);

    /// <summary>
    /// The answer's fields, into the object <paramref name="json"/> is writing: <c>topicId</c>, <c>messageId</c> and
    /// <c>epoch</c> for one topic, <c>messages</c> (each with those fields) for several.
    /// </summary>
    public void WriteFields(Utf8JsonWriter json)
    {
        if (_targets is null)
        {
            WriteMessage(json, _topicId, _messageId, _epoch!);
            return;
        }
        json.WriteStartArray("messages"u8);
        for (var i = 0; i < _targets.Length; i++)
        {
            json.WriteStartObject();
            WriteMessage(json, _targets[i].TopicId, _stored![i].MessageId, _stored[i].Epoch!);
            json.WriteEndObject();
        }
        json.WriteEndArray();
    }

    private static void WriteMessage(Utf8JsonWriter json, long topicId, long messageId, string epoch)
    {
        json.WriteNumber("topicId"u8, topicId);
        json.WriteNumber("messageId"u8, messageId);
        json.WriteString("epoch"u8, epoch);
    }

    [ThreadStatic]
    private static ArrayBufferWriter<byte>? t_body;

    [ThreadStatic]
    private static Utf8JsonWriter? t_json;

    /// <summary>
    /// REST's JSON body, written into this thread's buffer: valid until the thread's next answer, so that it is copied
    /// (to the connection's or the response's writer) before anything awaits. A publish allocates no body of its own.
    /// </summary>
    public ReadOnlySpan<byte> Json()
    {
        var body = t_body ??= new ArrayBufferWriter<byte>(256);
        body.ResetWrittenCount();
        var json = t_json ??= new Utf8JsonWriter(body);
        json.Reset(body);
        json.WriteStartObject();
        WriteFields(json);
        json.WriteEndObject();
        json.Flush();
        return body.WrittenSpan;
    }

    /// <summary>REST's answer on the pipeline's response, with a known length.</summary>
    public ValueTask<FlushResult> WriteAsync(HttpResponse response, string contentType, CancellationToken cancellationToken)
    {
        if (EntityTag(contentType) is { } tag)
        {
            response.Headers.ETag = tag;
        }
        var json = Json();
        response.StatusCode = StatusCode;
        response.ContentType = ContentType;
        response.ContentLength = json.Length;
        response.BodyWriter.Write(json);
        return response.BodyWriter.FlushAsync(cancellationToken);
    }
}
