using System.Globalization;
using System.Text.Json;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;

namespace Laharsub.Server.Endpoints;

/// <summary>Publishing one message to several topics at once, and publishing with an <c>Idempotency-Key</c>.</summary>
internal static partial class TopicEndpoints
{
    /// <summary>Reads the topics a publish to several topics names, for access control (a bad query is left to the endpoint).</summary>
    private static bool ReadPublishTargets(HttpContext context, List<long> topicIds)
    {
        var targets = new List<PublishTarget>();
        if (!PublishTargets.TryParse(context.Request, int.MaxValue, targets, out _, out _))
        {
            return false;
        }
        topicIds.AddRange(targets.Select(target => target.TopicId));
        return true;
    }

    /// <remarks><see cref="DescribePublishMany"/> declares the answers, which this handler writes itself.</remarks>
    private static async Task PublishMany(HttpContext context, PublishServices services)
    {
        if (await PublishManyAsync(context, services).ConfigureAwait(false) is { } refusal)
        {
            await refusal.ExecuteAsync(context).ConfigureAwait(false);
        }
    }

    private static async ValueTask<IResult?> PublishManyAsync(HttpContext context, PublishServices services)
    {
        var targets = new List<PublishTarget>();
        if (!PublishTargets.TryParse(context.Request, services.Options.MaxTopicsPerPublish, targets, out var parameter, out var error))
        {
            return BeforeBody(context, Problems.Invalid(parameter, error));
        }
        var contentType = context.Request.ContentType ?? MessageContentType.Default;
        if (MessageContentType.Validate(contentType) is { } contentTypeError)
        {
            return BeforeBody(context, InvalidContentType(contentTypeError));
        }
        if (context.Request.Headers.IfMatch.Count > 0)
        {
            return BeforeBody(context, Problems.Invalid("If-Match",
                "If-Match names one topic's epoch; a publish to several topics gives each its epoch in the query instead: topics=14~<epoch>,15~<epoch>."));
        }
        if (!IdempotencyKeyHeader.TryParse(context.Request, out var key, out var keyError))
        {
            return BeforeBody(context, Problems.Invalid(IdempotencyKeyHeader.Name, keyError));
        }
        if (context.Request.ContentLength > services.Options.MaxMessageBytes)
        {
            return BeforeBody(context, TooLarge(services.Options.MaxMessageBytes));
        }
        return await PublishToTargetsAsync(context, services, [.. targets], contentType, key, single: false).ConfigureAwait(false);
    }

    /// <summary>
    /// Publishes the request's body to <paramref name="targets"/> through the store's all-or-none publish, with
    /// the idempotency key if any, and answers as a publish to one topic (<paramref name="single"/>) or to several.
    /// </summary>
    private static async ValueTask<IResult?> PublishToTargetsAsync(HttpContext context, PublishServices services, PublishTarget[] targets,
        string contentType, string? key, bool single)
    {
        var maxBytes = services.Options.MaxMessageBytes;
        var cancellationToken = context.RequestAborted;
        var body = await ReadBodyAsync(context, maxBytes, cancellationToken).ConfigureAwait(false);
        if (body is null)
        {
            return TooLarge(maxBytes);
        }
        var bodyLength = body.Value.Memory.Length;
        MultiPublishResult result;
        try
        {
            if (StoppingRefusal.IfStopping(context, services.Lifetime.ApplicationStopping) is { } stopping)
            {
                return stopping;
            }
            var idempotencyKey = key is null ? null : IdempotencyKeyHeader.Fingerprinted(key, targets, contentType, body.Value.Memory.Span);
            result = await services.Store.PublishManyAsync(targets, body.Value.Memory, contentType, idempotencyKey, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            body.Value.Dispose();
        }
        if (result.Status == PublishStatus.Published)
        {
            if (!result.Replayed)
            {
                for (var i = 0; i < targets.Length; i++)
                {
                    services.Metrics.Published();
                }
            }
            var messages = new PublishedMessage[targets.Length];
            for (var i = 0; i < targets.Length; i++)
            {
                messages[i] = new PublishedMessage(targets[i].TopicId, result.Topics[i].MessageId, result.Topics[i].Epoch!);
            }
            if (single)
            {
                await WritePublishedAsync(context.Response, messages[0], cancellationToken).ConfigureAwait(false);
            }
            else
            {
                await WriteAnswerAsync(context.Response, JsonSerializer.SerializeToUtf8Bytes(new PublishedMessages(messages), LaharsubJsonContext.Default.PublishedMessages),
                    cancellationToken).ConfigureAwait(false);
            }
            return null;
        }
        return result.Status switch
        {
            PublishStatus.TopicNotFound when single => Problems.TopicNotFound(targets[0].TopicId),
            PublishStatus.EpochMismatch when single => EpochMismatch(context, targets[0].TopicId, targets[0].IfEpoch!, result.Topics[0].Epoch!),
            PublishStatus.TopicNotFound or PublishStatus.EpochMismatch => TopicsRefused(targets, result),
            PublishStatus.PresenceTopic => Problems.PresenceTopicPublish(targets[result.Topics.ToList().FindIndex(static topic => topic.Status == PublishStatus.PresenceTopic)].TopicId),
            PublishStatus.StorageFull => StorageFull(context, services.Options, services.Logger, targets[0].TopicId, result.RetryAfter),
            PublishStatus.InvalidContentType => InvalidContentType($"'{contentType}' is not a content type a message may have (no control characters)."),
            PublishStatus.IdempotencyKeyMismatch => KeyProblem(StatusCodes.Status422UnprocessableEntity, "Idempotency-Key reused",
                $"Idempotency-Key '{key}' was used with another request (other topics, content type or body) within Laharsub:IdempotencyKeyLifetime ({services.Options.IdempotencyKeyLifetime}). Nothing was published. Use a new key for a new message."),
            PublishStatus.IdempotencyKeyInProgress => KeyInProgress(context, key!),
            PublishStatus.TooManyIdempotencyKeys => KeysFull(context, services.Options),
            _ when bodyLength == 0 => Problems.Invalid("body", "The message body is empty: publish at least one byte."),
            _ => TooLarge(maxBytes),
        };
    }

    /// <summary>A <c>201</c> with a JSON body of known length.</summary>
    private static async ValueTask WriteAnswerAsync(HttpResponse response, byte[] json, CancellationToken cancellationToken)
    {
        response.StatusCode = StatusCodes.Status201Created;
        response.ContentType = Wire.WireFormat.JsonContentType;
        response.ContentLength = json.Length;
        await response.BodyWriter.WriteAsync(json, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The refusal of a publish to several topics, naming every refusing topic and why: 404 when one is missing, else 412.</summary>
    private static ProblemHttpResult TopicsRefused(PublishTarget[] targets, MultiPublishResult result)
    {
        var refused = new List<RefusedTopic>();
        for (var i = 0; i < targets.Length; i++)
        {
            var topic = result.Topics[i];
            if (topic.Status == PublishStatus.TopicNotFound)
            {
                refused.Add(new RefusedTopic(targets[i].TopicId, "notFound", null));
            }
            else if (topic.Status == PublishStatus.EpochMismatch)
            {
                refused.Add(new RefusedTopic(targets[i].TopicId, "epochMismatch", topic.Epoch));
            }
        }
        var missing = result.Status == PublishStatus.TopicNotFound;
        var described = string.Join("; ", refused.Select(topic => topic.Reason == "notFound"
            ? $"topic {topic.TopicId} does not exist"
            : $"topic {topic.TopicId} now has epoch '{topic.Epoch}', not the one the query names"));
        return TypedResults.Problem(
            title: missing ? "Topic not found" : "Topic is another incarnation",
            detail: $"Nothing was published to any topic: {described}. The topics extension lists each refusing topic and why; publish again without them, or with their current epochs.",
            statusCode: missing ? StatusCodes.Status404NotFound : StatusCodes.Status412PreconditionFailed,
            extensions: new Dictionary<string, object?> { ["topics"] = refused.ToArray() });
    }

    private static ProblemHttpResult KeyProblem(int status, string title, string detail) => TypedResults.Problem(
        title: title, detail: detail, statusCode: status,
        extensions: new Dictionary<string, object?> { ["errors"] = new Dictionary<string, string[]> { [IdempotencyKeyHeader.Name] = [detail] } });

    private static ProblemHttpResult KeyInProgress(HttpContext context, string key)
    {
        context.Response.Headers.RetryAfter = "1";
        return KeyProblem(StatusCodes.Status409Conflict, "Idempotency-Key in use",
            $"A publish with Idempotency-Key '{key}' is being stored right now. Nothing was published by this request; send it again after Retry-After to get that publish's answer.");
    }

    private static ProblemHttpResult KeysFull(HttpContext context, LaharsubStoreOptions options)
    {
        context.Response.Headers.RetryAfter = Math.Max(1, (long)options.IdempotencyKeyLifetime.TotalSeconds).ToString(CultureInfo.InvariantCulture);
        return KeyProblem(StatusCodes.Status507InsufficientStorage, "Too many idempotency keys",
            $"The server remembers its maximum of {options.MaxIdempotencyKeys} idempotency keys (Laharsub:MaxIdempotencyKeys), each for Laharsub:IdempotencyKeyLifetime ({options.IdempotencyKeyLifetime}). Nothing was published. Retry later, or publish without Idempotency-Key.");
    }
}
