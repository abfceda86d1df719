using System.Globalization;
using Laharsub.Server.Storage;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Mvc;

namespace Laharsub.Server.Transport;

/// <summary>
/// Why the store refused a publish, as one problem for every transport: REST answers <see cref="Result"/> with
/// the <c>Retry-After</c> and <c>ETag</c> headers, a WebSocket sends <see cref="Problem"/> with a
/// <c>retryAfter</c> extension. Built without the request, whose headers a WebSocket has long sent.
/// </summary>
/// <param name="Result">The problem as a REST answer.</param>
/// <param name="RetryAfterSeconds">When to try again, if the refusal says.</param>
/// <param name="ETag">The topic's current epoch as an entity tag, on a single publish's epoch mismatch.</param>
internal readonly record struct PublishRefusal(IResult Result, long? RetryAfterSeconds = null, string? ETag = null)
{
    /// <summary>The problem details of <see cref="Result"/>.</summary>
    public ProblemDetails Problem => Result switch
    {
        ProblemHttpResult problem => problem.ProblemDetails,
        ValidationProblem validation => validation.ProblemDetails,
        _ => throw new InvalidOperationException($"A publish refusal is a problem, not {Result.GetType().Name}."),
    };

    /// <summary>The answer for REST, its headers set on <paramref name="response"/>.</summary>
    public IResult Answer(HttpResponse response)
    {
        if (RetryAfterSeconds is { } seconds)
        {
            response.Headers.RetryAfter = seconds.ToString(CultureInfo.InvariantCulture);
        }
        if (ETag is not null)
        {
            response.Headers.ETag = ETag;
        }
        return Result;
    }

    /// <summary>The problem for a WebSocket's <c>problem</c> frame, with REST's <c>Retry-After</c> as <c>retryAfter</c>.</summary>
    public ProblemDetails FrameProblem()
    {
        var problem = Problem;
        if (RetryAfterSeconds is { } seconds)
        {
            problem.Extensions["retryAfter"] = seconds;
        }
        return problem;
    }

    /// <summary>
    /// The refusal for a publish the store did not store: <paramref name="topics"/> holds one result per target
    /// (or none for a refusal of the whole publish); <paramref name="single"/> answers as a publish to one topic.
    /// </summary>
    public static PublishRefusal For(PublishStatus status, PublishTarget[] targets, IReadOnlyList<PublishResult> topics, TimeSpan? retryAfter,
        bool single, string? key, string contentType, int bodyLength, LaharsubStoreOptions options, PublishSurface surface)
    {
        var first = targets[0];
        return status switch
        {
            PublishStatus.TopicNotFound when single => new(Problems.TopicNotFound(first.TopicId)),
            PublishStatus.EpochMismatch when single => EpochMismatch(first.TopicId, first.IfEpoch!, topics[0].Epoch!, surface),
            PublishStatus.VersionMismatch when single => VersionMismatch(first.TopicId, first.IfVersion!.Value, topics[0], surface),
            PublishStatus.TopicNotFound or PublishStatus.EpochMismatch or PublishStatus.VersionMismatch => new(TopicsRefused(status, targets, topics, surface)),
            PublishStatus.NotAPatch => new(Problems.FieldProblem(StatusCodes.Status415UnsupportedMediaType, "Unsupported content type", surface.ContentTypeField,
                $"'{contentType}' is not a merge patch, and topic {RefusingTopic(PublishStatus.NotAPatch, targets, topics)} holds state: a state topic takes application/merge-patch+json (RFC 7396) bodies, or a PUT of its state (application/json) to replace the whole document. Nothing was published.")),
            PublishStatus.NotAnObject => new(Problems.Invalid("body",
                "The body is not one JSON object (valid JSON, without duplicate keys, nested at most 64 deep): a merge patch to a state topic, and a state topic's document, is a JSON object. Nothing was published.")),
            PublishStatus.StateTooLarge => new(Problems.FieldProblem(StatusCodes.Status413PayloadTooLarge, "State too large", "body",
                $"The document of topic {RefusingTopic(PublishStatus.StateTooLarge, targets, topics)} would exceed {options.MaxStateBytes} bytes of compact JSON (Laharsub:MaxStateBytes). Nothing was published; remove fields with null in a patch to make room.",
                new Dictionary<string, object?> { ["maxStateBytes"] = options.MaxStateBytes })),
            PublishStatus.NotAStateTopic => new(Problems.NotAStateTopic(first.TopicId)),
            PublishStatus.StorageFull => new(Problems.Status(StatusCodes.Status507InsufficientStorage, "Server full",
                    $"Retained messages have reached Laharsub:MaxRetainedBytes ({options.MaxRetainedBytes} bytes); the message was not stored. Retry after older messages expire (Laharsub:MessageTimeToLive is {options.MessageTimeToLive})."),
                Math.Max(1, (long)Math.Ceiling((retryAfter ?? TimeSpan.FromSeconds(1)).TotalSeconds))),
            PublishStatus.InvalidContentType => new(Problems.Invalid(surface.ContentTypeField, $"'{contentType}' is not a content type a message may have (no control characters).")),
            PublishStatus.IdempotencyKeyMismatch => new(KeyProblem(surface, StatusCodes.Status422UnprocessableEntity, "Idempotency-Key reused",
                $"Idempotency-Key '{key}' was used with another request (other topics, content type or body) within Laharsub:IdempotencyKeyLifetime ({options.IdempotencyKeyLifetime}). Nothing was published. Use a new key for a new message.")),
            PublishStatus.IdempotencyKeyInProgress => new(KeyProblem(surface, StatusCodes.Status409Conflict, "Idempotency-Key in use",
                $"A publish with Idempotency-Key '{key}' is being stored right now. Nothing was published by this request; send it again after Retry-After to get that publish's answer."), 1),
            PublishStatus.TooManyIdempotencyKeys => new(KeyProblem(surface, StatusCodes.Status507InsufficientStorage, "Too many idempotency keys",
                    $"The server remembers its maximum of {options.MaxIdempotencyKeys} idempotency keys (Laharsub:MaxIdempotencyKeys), each for Laharsub:IdempotencyKeyLifetime ({options.IdempotencyKeyLifetime}). Nothing was published. Retry later, or publish without Idempotency-Key."),
                Math.Max(1, (long)options.IdempotencyKeyLifetime.TotalSeconds)),
            PublishStatus.PresenceTopic => new(Problems.PresenceTopicPublish(PresenceTopicOf(targets, topics))),
            PublishStatus.TopicsNotTogether => new(Problems.Invalid("topics",
                "These topics are kept apart (different buckets of a Redis Cluster, Laharsub:Redis:Buckets), where one atomic publish cannot reach them all. Nothing was published. Publish to them separately.")),
            _ when bodyLength == 0 => new(Problems.Invalid("body", "The message body is empty: publish at least one byte.")),
            _ => new(TooLarge(options.MaxMessageBytes)),
        };
    }

    /// <summary>The first target the store refused with <paramref name="status"/> (the only target of a single publish).</summary>
    private static long RefusingTopic(PublishStatus status, ReadOnlySpan<PublishTarget> targets, IReadOnlyList<PublishResult> topics)
    {
        for (var i = 0; i < topics.Count; i++)
        {
            if (topics[i].Status == status)
            {
                return targets[i].TopicId;
            }
        }
        return targets[0].TopicId;
    }

    /// <summary>A compare-and-set on one topic that found the topic at another version.</summary>
    public static PublishRefusal VersionMismatch(long topicId, long expected, PublishResult current, PublishSurface surface) => new(TypedResults.Problem(
            title: "Topic is at another version",
            detail: $"Topic {topicId} is at version {current.MessageId} of epoch '{current.Epoch}', not at version {expected} that {surface.EpochField} names: another write came first. Nothing was published. Read the state again (its ETag is the current version), then write again with that version.",
            statusCode: StatusCodes.Status412PreconditionFailed,
            extensions: new Dictionary<string, object?> { ["topicId"] = topicId, ["epoch"] = current.Epoch, ["version"] = current.MessageId }),
        ETag: $"\"{current.Epoch}:{current.MessageId}\"");

    /// <summary>The first target the store refused as a presence companion topic (the only target of a single publish).</summary>
    private static long PresenceTopicOf(ReadOnlySpan<PublishTarget> targets, IReadOnlyList<PublishResult> topics)
    {
        for (var i = 0; i < topics.Count; i++)
        {
            if (topics[i].Status == PublishStatus.PresenceTopic)
            {
                return targets[i].TopicId;
            }
        }
        return targets[0].TopicId;
    }

    public static ProblemHttpResult TooLarge(int maxBytes) => Problems.Status(StatusCodes.Status413PayloadTooLarge, "Message too large",
        $"Messages may be at most {maxBytes} bytes (Laharsub:MaxMessageBytes). Send a smaller message, or a reference to where the content is.");

    /// <summary>A publish to one topic that names another incarnation than the topic now is.</summary>
    public static PublishRefusal EpochMismatch(long topicId, string expected, string current, PublishSurface surface) => new(TypedResults.Problem(
            title: "Topic is another incarnation",
            detail: $"Topic {topicId} now has epoch '{current}', not '{expected}' from {surface.EpochField}: it was deleted and created again (or the server lost its data) since you learned its epoch. Nothing was published. Decide whether this topic is still the one you meant, then publish with {surface.EpochField}: \"{current}\" or without {surface.EpochField}.",
            statusCode: StatusCodes.Status412PreconditionFailed,
            extensions: new Dictionary<string, object?> { ["topicId"] = topicId, ["epoch"] = current }),
        ETag: $"\"{current}\"");

    /// <summary>The refusal of a publish to several topics, naming every refusing topic and why: 404 when one is missing, else 412.</summary>
    private static ProblemHttpResult TopicsRefused(PublishStatus status, PublishTarget[] targets, IReadOnlyList<PublishResult> topics, PublishSurface surface)
    {
        var refused = new List<RefusedTopic>();
        for (var i = 0; i < targets.Length; i++)
        {
            var topic = topics[i];
            if (topic.Status == PublishStatus.TopicNotFound)
            {
                refused.Add(new RefusedTopic(targets[i].TopicId, "notFound", null));
            }
            else if (topic.Status == PublishStatus.EpochMismatch)
            {
                refused.Add(new RefusedTopic(targets[i].TopicId, "epochMismatch", topic.Epoch));
            }
            else if (topic.Status == PublishStatus.VersionMismatch)
            {
                refused.Add(new RefusedTopic(targets[i].TopicId, "versionMismatch", topic.Epoch, topic.MessageId));
            }
        }
        var missing = status == PublishStatus.TopicNotFound;
        var described = string.Join("; ", refused.Select(topic => topic.Reason switch
        {
            "notFound" => $"topic {topic.TopicId} does not exist",
            "versionMismatch" => $"topic {topic.TopicId} is at version {topic.Version}, not the one {surface.TopicsSource} names",
            _ => $"topic {topic.TopicId} now has epoch '{topic.Epoch}', not the one {surface.TopicsSource} names",
        }));
        return TypedResults.Problem(
            title: missing ? "Topic not found" : "Topic is another incarnation",
            detail: $"Nothing was published to any topic: {described}. The topics extension lists each refusing topic and why; publish again without them, or with their current epochs.",
            statusCode: missing ? StatusCodes.Status404NotFound : StatusCodes.Status412PreconditionFailed,
            extensions: new Dictionary<string, object?> { ["topics"] = refused.ToArray() });
    }

    private static ProblemHttpResult KeyProblem(PublishSurface surface, int status, string title, string detail) => TypedResults.Problem(
        title: title, detail: detail, statusCode: status,
        extensions: new Dictionary<string, object?> { ["errors"] = new Dictionary<string, string[]> { [surface.KeyField] = [detail] } });
}
