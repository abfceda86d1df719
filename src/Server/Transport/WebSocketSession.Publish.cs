using System.Text;
using Laharsub.Server.Access;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;

namespace Laharsub.Server.Transport;

/// <summary>The WebSocket's <c>publish</c> frame: to one topic or several, with an idempotency key or without (docs/protocol.md, "WebSocket").</summary>
internal sealed partial class WebSocketSession
{
    /// <summary>Publishes as the REST publish with the same inputs would, answering <c>published</c>; otherwise returns the refusal, having changed nothing.</summary>
    private async ValueTask<ProblemDetails?> PublishAsync(WebSocketClientFrame frame)
    {
        // Each publish frame counts as a POST would, against the same bucket: Laharsub:RateLimit.
        if (!caller.TryAcquire(out var retryAfterSeconds))
        {
            var refusal = services.RateLimit.Refusal(retryAfterSeconds);
            // What REST says in Retry-After.
            refusal.Extensions["retryAfter"] = (long)retryAfterSeconds;
            return refusal;
        }
        if (!TryReadTargets(frame, out var targets, out var single, out var field, out var error))
        {
            return Invalid(field, error);
        }
        if (frame.Encoding is not (null or "text" or "base64"))
        {
            return Invalid("encoding", $"'{frame.Encoding}' is not an encoding: use \"text\" (the body is the text) or \"base64\".");
        }
        var base64 = frame.Encoding == "base64";
        var contentType = frame.ContentType ?? (base64 ? MessageContentType.Default : "text/plain; charset=utf-8");
        if (MessageContentType.Validate(contentType) is { } contentTypeError)
        {
            return Invalid("contentType", contentTypeError);
        }
        if (frame.IdempotencyKey is { } key && !IdempotencyKeyHeader.IsValid(key, out var keyError))
        {
            return Invalid("idempotencyKey", keyError);
        }
        if (frame.Body is null)
        {
            return Invalid("body", "The frame has no \"body\": publish at least one byte.");
        }
        byte[] body;
        try
        {
            body = base64 ? Convert.FromBase64String(frame.Body) : Encoding.UTF8.GetBytes(frame.Body);
        }
        catch (FormatException)
        {
            return Invalid("body", "With \"encoding\":\"base64\" the body is standard base64.");
        }
        // Every topic, in the frame's order, before the store is asked: the first forbidden one is named, as REST names it.
        foreach (var target in targets)
        {
            if (!await caller.AllowsAsync(LaharsubOperation.Publish, target.TopicId).ConfigureAwait(false))
            {
                return Forbidden(LaharsubOperation.Publish, target.TopicId);
            }
        }
        if (services.Lifetime.ApplicationStopping.IsCancellationRequested)
        {
            return Problems.Status(StatusCodes.Status503ServiceUnavailable, "Shutting down",
                "This instance is stopping and takes no more messages; publish again after reconnecting (another instance answers).").ProblemDetails;
        }
        if (body.Length > services.StoreOptions.MaxMessageBytes)
        {
            return PublishRefusal.TooLarge(services.StoreOptions.MaxMessageBytes).ProblemDetails;
        }
        // Current while the store publishes, which keeps its context with the message (Message.PublisherTraceContext).
        using var activity = single ? LaharsubActivitySource.StartPublish(targets[0].TopicId) : null;
        if (single)
        {
            // As REST's publish to one topic.
            var result = await StorePublish.PublishOneAsync(services.Store, services.Metrics, targets[0], body, contentType, frame.IdempotencyKey, activity,
                caller.Gone).ConfigureAwait(false);
            if (result.Status != PublishStatus.Published)
            {
                return Refused(result.Status, targets, [result], result.RetryAfter, single, frame.IdempotencyKey, contentType, body.Length);
            }
            await SendPublishedAsync(frame.Id, PublishAnswer.One(targets[0].TopicId, result)).ConfigureAwait(false);
            return null;
        }
        var stored = await StorePublish.PublishAsync(services.Store, services.Metrics, targets, body, contentType, frame.IdempotencyKey, caller.Gone).ConfigureAwait(false);
        if (stored.Status != PublishStatus.Published)
        {
            return Refused(stored.Status, targets, stored.Topics, stored.RetryAfter, single, frame.IdempotencyKey, contentType, body.Length);
        }
        await SendPublishedAsync(frame.Id, PublishAnswer.Many(targets, stored)).ConfigureAwait(false);
        return null;
    }

    private ProblemDetails Refused(PublishStatus status, PublishTarget[] targets, IReadOnlyList<PublishResult> topics, TimeSpan? retryAfter,
        bool single, string? key, string contentType, int bodyLength) =>
        PublishRefusal.For(status, targets, topics, retryAfter, single, key, contentType, bodyLength, services.StoreOptions, PublishSurface.Socket).FrameProblem();

    /// <summary>
    /// Reads the frame's targets: <c>topicId</c> (and <c>ifEpoch</c>) for one topic, answered as REST's publish
    /// to one topic; or <c>topics</c>, in the syntax of REST's <c>topics</c> query and within the same
    /// <c>MaxTopicsPerPublish</c>, answered as its publish to several. False with the field at fault and why.
    /// </summary>
    private bool TryReadTargets(WebSocketClientFrame frame, out PublishTarget[] targets, out bool single, out string field, out string error)
    {
        targets = [];
        single = frame.Topics is null;
        field = single ? "topicId" : "topics";
        error = "";
        if (!single)
        {
            if (frame.TopicId is not null || frame.IfEpoch is not null)
            {
                error = "A publish frame names one topic with \"topicId\" (and \"ifEpoch\"), or several with \"topics\" (each with its ~epoch, as \"14~<epoch>,15\"), not both.";
                return false;
            }
            var list = new List<PublishTarget>();
            if (!PublishTargets.TryParse(frame.Topics, services.StoreOptions.MaxTopicsPerPublish, list, out error))
            {
                return false;
            }
            targets = [.. list];
            return true;
        }
        if (frame.TopicId is not { } topicId || topicId <= 0)
        {
            error = "Name the topic to publish to: \"topicId\" is a positive integer (or \"topics\" names several, as \"14,15~<epoch>\").";
            return false;
        }
        if (frame.IfEpoch is { } ifEpoch && !EpochText.IsValid(ifEpoch))
        {
            field = "ifEpoch";
            error = $"'{ifEpoch}' is not an epoch: send the epoch from the topic's info or a publish answer, or leave it out.";
            return false;
        }
        targets = [new PublishTarget(topicId, frame.IfEpoch)];
        return true;
    }

    /// <summary>The <c>published</c> frame: the fields of REST's <c>201</c> to the same publish.</summary>
    private Task SendPublishedAsync(string? id, PublishAnswer answer) => SendFramesAsync(writer => WriteJson(writer, json =>
    {
        json.WriteString("type"u8, "published"u8);
        if (id is not null)
        {
            json.WriteString("id"u8, id);
        }
        answer.WriteFields(json);
    }));
}
