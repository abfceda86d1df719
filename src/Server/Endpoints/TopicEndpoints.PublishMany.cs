using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Endpoints;

/// <summary>Publishing one message to several topics at once (with an <c>Idempotency-Key</c> or without).</summary>
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
            return BeforeBody(context, PublishRefusal.TooLarge(services.Options.MaxMessageBytes));
        }
        PublishTarget[] publish = [.. targets];
        if (ExpectsContinue(context.Request)
            && await RefusalBeforeBodyAsync(context, services, publish, contentType, key, single: false).ConfigureAwait(false) is { } refusal)
        {
            return BeforeBody(context, refusal);
        }
        return await PublishToTargetsAsync(context, services, publish, contentType, key).ConfigureAwait(false);
    }

    /// <summary>
    /// Publishes the request's body to <paramref name="targets"/> through the store's all-or-none publish, with
    /// the idempotency key if any, and answers with each message.
    /// </summary>
    private static async ValueTask<IResult?> PublishToTargetsAsync(HttpContext context, PublishServices services, PublishTarget[] targets,
        string contentType, string? key)
    {
        var maxBytes = services.Options.MaxMessageBytes;
        var cancellationToken = context.RequestAborted;
        var body = await ReadBodyAsync(context, maxBytes, cancellationToken).ConfigureAwait(false);
        if (body is null)
        {
            return PublishRefusal.TooLarge(maxBytes);
        }
        var bodyLength = body.Value.Memory.Length;
        MultiPublishResult result;
        try
        {
            if (StoppingRefusal.IfStopping(context, services.Lifetime.ApplicationStopping) is { } stopping)
            {
                return stopping;
            }
            result = await StorePublish.PublishAsync(services.Store, services.Metrics, targets, body.Value.Memory, contentType, key, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            body.Value.Dispose();
        }
        if (result.Status != PublishStatus.Published)
        {
            return Refused(context, services, result.Status, targets, result.Topics, result.RetryAfter, single: false, key, contentType, bodyLength);
        }
        await PublishAnswer.Many(targets, result).WriteAsync(context.Response, contentType, cancellationToken).ConfigureAwait(false);
        return null;
    }

    /// <summary>The REST answer to a publish the store refused (logged when the store is full).</summary>
    private static IResult Refused(HttpContext context, PublishServices services, PublishStatus status, PublishTarget[] targets, IReadOnlyList<PublishResult> topics,
        TimeSpan? retryAfter, bool single, string? key, string contentType, int bodyLength)
    {
        if (status == PublishStatus.StorageFull)
        {
            Log.StorageFull(services.Logger, services.Options.MaxRetainedBytes, targets[0].TopicId);
        }
        return PublishRefusal.For(status, targets, topics, retryAfter, single, key, contentType, bodyLength, services.Options, PublishSurface.Rest)
            .Answer(context.Response);
    }
}
