using System.Buffers;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Endpoints;

// State topics (docs/protocol.md, "State topics"): reading and replacing the document.
internal static partial class TopicEndpoints
{
    /// <summary>
    /// <c>GET</c>/<c>HEAD /topics/{id}/state</c>: the document itself, with <c>ETag: "&lt;epoch&gt;:&lt;version&gt;"</c>;
    /// <c>304</c> when <c>If-None-Match</c> names that tag.
    /// </summary>
    private static async Task<IResult> GetState(string topicId, HttpContext context, ILaharsubStore store)
    {
        if (!Problems.TryParseId(topicId, out var id))
        {
            return Problems.Invalid("topicId", Problems.NotAnId(topicId, "topic id"));
        }
        var results = new TopicReadResult[1];
        await store.ReadAsync(new[] { new TopicReadRequest(id, 0, 0, 0, WithDocument: true) }, results, [], context.RequestAborted).ConfigureAwait(false);
        var read = results[0];
        if (!read.Exists)
        {
            return Problems.TopicNotFound(id);
        }
        if (read.Document is not { } document)
        {
            return Problems.NotAStateTopic(id);
        }
        var tag = TopicTags.State(read.Epoch, read.LastMessageId);
        context.Response.Headers.ETag = tag;
        if (context.Request.Headers.IfNoneMatch.Count > 0
            && EntityTagHeaderValue.TryParseList(context.Request.Headers.IfNoneMatch, out var tags)
            && tags.Any(t => t.Compare(new EntityTagHeaderValue(tag), useStrongComparison: false) || t.Equals(EntityTagHeaderValue.Any)))
        {
            return TypedResults.StatusCode(StatusCodes.Status304NotModified);
        }
        return TypedResults.Bytes(document, MergePatch.DocumentMediaType);
    }

    /// <summary><c>PUT /topics/{id}/state</c>: replaces the document with the body, a JSON object, as the topic's next message.</summary>
    private static Task PutState(string topicId, HttpContext context, PublishServices services) => AnswerAsync(PutStateAsync(topicId, context, services), context);

    private static async ValueTask<IResult?> PutStateAsync(string topicId, HttpContext context, PublishServices services)
    {
        if (!Problems.TryParseId(topicId, out var id))
        {
            return BeforeBody(context, Problems.Invalid("topicId", Problems.NotAnId(topicId, "topic id")));
        }
        // A merge patch is JSON too, but sent here it is a mistake for a POST: it would replace, not patch.
        if (!context.Request.HasJsonContentType() || MergePatch.IsMergePatch(context.Request.ContentType))
        {
            return BeforeBody(context, Problems.UnsupportedStateContentType(context.Request.ContentType, put: true));
        }
        if (!TryParseIfMatch(context.Request, out var ifEpoch, out var ifVersion, out var ifMatchError))
        {
            return BeforeBody(context, Problems.Invalid("If-Match", ifMatchError));
        }
        if (!IdempotencyKeyHeader.TryParse(context.Request, out var key, out var keyError))
        {
            return BeforeBody(context, Problems.Invalid(IdempotencyKeyHeader.Name, keyError));
        }
        using var activity = LaharsubActivitySource.StartPublish(id);
        var maxBytes = services.Options.MaxMessageBytes;
        var cancellationToken = context.RequestAborted;
        var body = await ReadBodyAsync(context, maxBytes, cancellationToken).ConfigureAwait(false);
        if (body is null)
        {
            return PublishRefusal.TooLarge(maxBytes);
        }
        var target = new PublishTarget(id, ifEpoch, ifVersion);
        PublishResult result;
        var bodyLength = body.Value.Memory.Length;
        try
        {
            if (StoppingRefusal.IfStopping(context, services.Lifetime.ApplicationStopping) is { } stopping)
            {
                return stopping;
            }
            var idempotencyKey = key is null ? null : IdempotencyKeyHeader.Fingerprinted(key, [target], MergePatch.DocumentMediaType, body.Value.Memory.Span);
            result = await services.Store.ReplaceStateAsync(target, body.Value.Memory, idempotencyKey, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            body.Value.Dispose();
        }
        if (result.Status != PublishStatus.Published)
        {
            return Refused(context, services, result.Status, [target], [result], result.RetryAfter, single: true, key, MergePatch.DocumentMediaType, bodyLength);
        }
        services.Metrics.Published();
        LaharsubActivitySource.Published(activity, result.MessageId, result.Epoch!);
        context.Response.Headers.ETag = TopicTags.State(result.Epoch!, result.MessageId);
        context.Response.StatusCode = StatusCodes.Status200OK;
        context.Response.ContentType = PublishAnswer.ContentType;
        // A publish's fields, as REST's 201 to a publish carries them; the length is left to the framing, as before.
        context.Response.BodyWriter.Write(PublishAnswer.One(id, result).Json());
        await context.Response.BodyWriter.FlushAsync(cancellationToken).ConfigureAwait(false);
        return null;
    }
}
