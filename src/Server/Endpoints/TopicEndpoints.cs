using System.Buffers;
using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Limits;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Endpoints;

/// <summary>Topic resources: create, list, inspect, delete, and publish to a topic.</summary>
internal static partial class TopicEndpoints
{
    private const int DefaultPageSize = 100;
    private const int MaxPageSize = 1000;
    private static readonly string[] ReadMethods = [HttpMethods.Get, HttpMethods.Head];

    /// <summary>Maps the topic endpoints into <paramref name="group"/>.</summary>
    /// <param name="group">The group that MapLaharsub made for its prefix.</param>
    /// <param name="rateLimited">
    /// Whether the state-changing endpoints carry the rate limit policy. Without it they carry no rate
    /// limit metadata at all, so ASP.NET Core's rate limiter (whose partition lookup takes a lock shared
    /// by every request) stays off the publish path.
    /// </param>
    public static RouteGroupBuilder MapTopics(this RouteGroupBuilder group, bool rateLimited)
    {
        var topics = group.MapGroup("/topics");
        // HEAD wherever GET: a client may check a topic exists without its body (Kestrel drops the body of a HEAD answer).
        topics.MapMethods("/", ReadMethods, ListTopics).RequireAccess(AccessRule.ListTopics).DescribeListTopics();
        topics.MapMethods("/{topicId}", ReadMethods, GetTopic).RequireAccess(AccessRule.TopicInfo).DescribeGetTopic();
        topics.MapGet("/{topicId}/presence", GetPresence).RequireAccess(AccessRule.Presence).DescribeGetPresence();
        // Every state change shares the conventions of changing state: refused while the instance stops, and rate limited.
        var changes = topics.MapGroup("").RefuseWhileStopping();
        changes.MapPost("/", CreateTopic).RequireAccess(AccessRule.CreateTopic).DescribeCreateTopic();
        changes.MapDelete("/{topicId}", DeleteTopic).RequireAccess(AccessRule.DeleteTopic).DescribeDeleteTopic();
        topics.MapMethods("/{topicId}/state", ReadMethods, GetState).RequireAccess(AccessRule.State).DescribeGetState();
        // Publishing, the hot change, takes its services from the application's services, resolved on the
        // first publish, rather than as handler parameters: minimal APIs resolve those from a DI scope
        // opened for each request. It writes its 201 itself for the same reason (a typed result resolves
        // its JSON options and logger from that scope), and every answer it gives has a body, so status
        // code pages keep no state for it either.
        var services = ((IEndpointRouteBuilder)group).ServiceProvider;
        PublishServices? resolved = null;
        Delegate publish = (string topicId, HttpContext context) => Publish(topicId, context, resolved ??= new PublishServices(services));
        changes.MapPost("/{topicId}", publish).RequireAccess(AccessRule.Publish).WithMetadata(WritesEveryAnswer.Instance).DescribePublish();
        Delegate publishMany = (HttpContext context) => PublishMany(context, resolved ??= new PublishServices(services));
        // The literal segment outranks {topicId}, so "publish" is never read as a topic id.
        changes.MapPost("/publish", publishMany).RequireAccess(AccessRule.PublishMany, ReadPublishTargets)
            .WithMetadata(WritesEveryAnswer.Instance).DescribePublishMany();
        Delegate putState = (string topicId, HttpContext context) => PutState(topicId, context, resolved ??= new PublishServices(services));
        changes.MapPut("/{topicId}/state", putState).RequireAccess(AccessRule.Publish).WithMetadata(WritesEveryAnswer.Instance).DescribePutState();
        if (rateLimited)
        {
            changes.RequireRateLimiting(LaharsubRateLimiterPolicy.Name)
                .AddEndpointFilter(LaharsubRateLimiterPolicy.WarnIfBypassedAsync);
        }
        return topics;
    }

    private static async Task<Results<Created<CreatedTopic>, ValidationProblem, ProblemHttpResult>> CreateTopic(
        CreateTopicRequest body, HttpRequest request, ILaharsubStore store, IOptions<LaharsubStoreOptions> options, ILoggerFactory loggers, CancellationToken cancellationToken)
    {
        if (body.Error is not null)
        {
            return Problems.Invalid(body.ErrorParameter!, body.Error);
        }
        TopicInfo? topic;
        if (body.Presence && store is not IPresenceStore)
        {
            return Problems.Invalid("presence", "This server's store does not keep presence: create the topic without it.");
        }
        try
        {
            topic = body.Presence
                ? await ((IPresenceStore)store).CreateTopicWithPresenceAsync(body.Label, body.State, cancellationToken).ConfigureAwait(false)
                : await store.CreateTopicAsync(body.Label, body.State, cancellationToken).ConfigureAwait(false);
        }
        catch (NotSupportedException) when (body.State)
        {
            // A store that keeps no documents (yet) says so by this exception (ILaharsubStore's contract).
            return Problems.Invalid("state", "This server's store does not keep state topics: create the topic without state.");
        }
        if (topic is null)
        {
            Log.TopicLimitReached(Logger(loggers), options.Value.MaxTopics);
            return Problems.Status(StatusCodes.Status409Conflict, "Too many topics",
                $"The server already holds its maximum of {options.Value.MaxTopics} topics (Laharsub:MaxTopics). Delete unused topics or raise the limit.");
        }
        Log.TopicCreated(Logger(loggers), topic.TopicId);
        request.HttpContext.Response.Headers.ETag = TopicTags.Epoch(topic.Epoch);
        return TypedResults.Created($"{CollectionUrl(request)}/{topic.TopicId}", CreatedTopic.From(topic));
    }

    private static async Task<Results<Ok<TopicPage>, ValidationProblem>> ListTopics(
        HttpRequest request, ILaharsubStore store, TopicSignals signals, string? after, string? limit, string? label, CancellationToken cancellationToken)
    {
        long afterId = 0;
        if (after is not null && !PlainInteger.TryParse(after, out afterId))
        {
            return Problems.Invalid("after", $"'{after}' is not a topic id: use 0 or a positive integer.");
        }
        var pageSize = DefaultPageSize;
        if (limit is not null && (!PlainInteger.TryParse(limit, out pageSize) || pageSize is < 1 or > MaxPageSize))
        {
            return Problems.Invalid("limit", $"'{limit}' is not a page size: use an integer from 1 to {MaxPageSize}.");
        }
        if (label is not null && TopicLabel.ValidatePattern(label) is { } labelError)
        {
            return Problems.Invalid("label", labelError);
        }
        var (found, nextAfter) = await TopicListing.ListAsync(store, afterId, pageSize, label,
            request.HttpContext.Features.Get<ITopicVisibility>(), cancellationToken).ConfigureAwait(false);
        var page = found.Select(topic => WithWaitingPolls(topic, signals)).ToList();
        var next = nextAfter is { } nextId
            ? $"{CollectionUrl(request)}?after={nextId}&limit={pageSize}{(label is null ? "" : "&label=" + Uri.EscapeDataString(label))}"
            : null;
        return TypedResults.Ok(new TopicPage(page, next));
    }

    private static async Task<Results<Ok<TopicResource>, ValidationProblem, ProblemHttpResult>> GetTopic(
        string topicId, HttpResponse response, ILaharsubStore store, TopicSignals signals, CancellationToken cancellationToken)
    {
        if (!Problems.TryParseId(topicId, out var id))
        {
            return Problems.Invalid("topicId", Problems.NotAnId(topicId, "topic id"));
        }
        var topic = await store.GetTopicAsync(id, cancellationToken).ConfigureAwait(false);
        if (topic is null)
        {
            return Problems.TopicNotFound(id);
        }
        response.Headers.ETag = TopicTags.Epoch(topic.Epoch);
        return TypedResults.Ok(WithWaitingPolls(topic, signals));
    }

    private static async Task<Results<NoContent, ValidationProblem, ProblemHttpResult>> DeleteTopic(
        string topicId, ILaharsubStore store, ILoggerFactory loggers, CancellationToken cancellationToken)
    {
        if (!Problems.TryParseId(topicId, out var id))
        {
            return Problems.Invalid("topicId", Problems.NotAnId(topicId, "topic id"));
        }
        if (store is IPresenceStore && (await store.GetTopicAsync(id, cancellationToken).ConfigureAwait(false))?.PresenceOf is { } owner)
        {
            return Problems.PresenceTopic(id, $"it goes with topic {owner}, when that is deleted.");
        }
        if (!await store.DeleteTopicAsync(id, cancellationToken).ConfigureAwait(false))
        {
            return Problems.TopicNotFound(id);
        }
        Log.TopicDeleted(Logger(loggers), id);
        return TypedResults.NoContent();
    }

    private sealed class PublishServices(IServiceProvider services)
    {
        public ILaharsubStore Store { get; } = services.GetRequiredService<ILaharsubStore>();
        public LaharsubStoreOptions Options { get; } = services.GetRequiredService<IOptions<LaharsubStoreOptions>>().Value;
        public ILogger Logger { get; } = Logger(services.GetRequiredService<ILoggerFactory>());
        public LaharsubMetrics Metrics { get; } = services.GetRequiredService<LaharsubMetrics>();
        public IHostApplicationLifetime Lifetime { get; } = services.GetRequiredService<IHostApplicationLifetime>();
    }

    /// <remarks><see cref="DescribePublish"/> declares the answers, which this handler writes itself.</remarks>
    private static Task Publish(string topicId, HttpContext context, PublishServices services) => AnswerAsync(PublishAsync(topicId, context, services), context);

    /// <summary>Writes the refusal a write returns, if any; a write that went through wrote its own answer.</summary>
    private static async Task AnswerAsync(ValueTask<IResult?> writing, HttpContext context)
    {
        if (await writing.ConfigureAwait(false) is { } refusal)
        {
            await refusal.ExecuteAsync(context).ConfigureAwait(false);
        }
    }

    /// <summary>Publishes the request's body and answers <c>201</c>; otherwise returns the refusal, having changed nothing.</summary>
    private static async ValueTask<IResult?> PublishAsync(string topicId, HttpContext context, PublishServices services)
    {
        if (!Problems.TryParseId(topicId, out var id))
        {
            return BeforeBody(context, Problems.Invalid("topicId", Problems.NotAnId(topicId, "topic id")));
        }
        var contentType = context.Request.ContentType ?? MessageContentType.Default;
        if (MessageContentType.Validate(contentType) is { } contentTypeError)
        {
            return BeforeBody(context, InvalidContentType(contentTypeError));
        }

        if (!TryParseIfMatch(context.Request, out var ifEpoch, out var ifVersion, out var ifMatchError))
        {
            return BeforeBody(context, Problems.Invalid("If-Match", ifMatchError));
        }
        if (!IdempotencyKeyHeader.TryParse(context.Request, out var key, out var keyError))
        {
            return BeforeBody(context, Problems.Invalid(IdempotencyKeyHeader.Name, keyError));
        }

        var target = new PublishTarget(id, ifEpoch, ifVersion);
        using var activity = LaharsubActivitySource.StartPublish(id);
        var maxBytes = services.Options.MaxMessageBytes;
        var cancellationToken = context.RequestAborted;
        if (ExpectsContinue(context.Request)
            && await RefusalBeforeBodyAsync(context, services, [target], contentType, key, single: true).ConfigureAwait(false) is { } refusal)
        {
            return BeforeBody(context, refusal);
        }
        var body = await ReadBodyAsync(context, maxBytes, cancellationToken).ConfigureAwait(false);
        if (body is null)
        {
            return PublishRefusal.TooLarge(maxBytes);
        }
        var bodyLength = body.Value.Memory.Length;
        PublishResult result;
        try
        {
            // The body is read here, after StoppingRefusal's filter let the request in: shutdown may have begun meanwhile.
            if (StoppingRefusal.IfStopping(context, services.Lifetime.ApplicationStopping) is { } stopping)
            {
                return stopping;
            }
            result = await StorePublish.PublishOneAsync(services.Store, services.Metrics, target, body.Value.Memory, contentType, key, activity,
                cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            body.Value.Dispose();
        }
        if (result.Status == PublishStatus.Published)
        {
            await PublishAnswer.One(id, result).WriteAsync(context.Response, contentType, cancellationToken).ConfigureAwait(false);
            return null;
        }
        return Refused(context, services, result.Status, [target], [result], result.RetryAfter, single: true, key, contentType, bodyLength);
    }

    /// <summary>
    /// Whether the client waits for <c>100 Continue</c> before it sends the body. Kestrel sends that at the
    /// first read of the body, so whatever refuses the publish without its body must be answered before.
    /// </summary>
    private static bool ExpectsContinue(HttpRequest request) =>
        request.Headers.Expect.ToString().Contains("100-continue", StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// A refusal given before the body was read. A client waiting for <c>100 Continue</c> then holds its body
    /// back, and Kestrel would wait 5 s to drain it before resetting the connection; so the answer closes
    /// the connection, and says so, as RFC 9110 (10.1.1) asks of a server that answers before the body.
    /// </summary>
    private static IResult BeforeBody(HttpContext context, IResult refusal)
    {
        if (ExpectsContinue(context.Request))
        {
            context.Response.Headers.Connection = "close";
        }
        return refusal;
    }

    /// <summary>
    /// What a publish that expects <c>100 Continue</c> is refused for before its body is read: too large by
    /// its Content-Length, an unknown topic, or another incarnation than its epoch names; answered as the
    /// store's refusal of the publish to one topic (<paramref name="single"/>) or to several would be. Only
    /// such a client pays these store lookups (the publish checks all of it again, atomically); any other
    /// publish goes straight to the store, which answers the same refusals after the body.
    /// </summary>
    private static async ValueTask<IResult?> RefusalBeforeBodyAsync(HttpContext context, PublishServices services, PublishTarget[] targets,
        string contentType, string? key, bool single)
    {
        var maxBytes = services.Options.MaxMessageBytes;
        if (context.Request.ContentLength > maxBytes)
        {
            return PublishRefusal.TooLarge(maxBytes);
        }
        var topics = new PublishResult[targets.Length];
        var status = PublishStatus.Published;
        for (var i = 0; i < targets.Length; i++)
        {
            var (topicId, ifEpoch, _) = targets[i];
            var topic = await services.Store.GetTopicAsync(topicId, context.RequestAborted).ConfigureAwait(false);
            if (topic is null)
            {
                topics[i] = new PublishResult(PublishStatus.TopicNotFound);
                status = PublishStatus.TopicNotFound;
            }
            else if (ifEpoch is not null && !string.Equals(ifEpoch, topic.Epoch, StringComparison.Ordinal))
            {
                topics[i] = new PublishResult(PublishStatus.EpochMismatch, Epoch: topic.Epoch);
                // A missing topic outranks another incarnation, as in the store's answer.
                status = status == PublishStatus.TopicNotFound ? status : PublishStatus.EpochMismatch;
            }
        }
        return status == PublishStatus.Published ? null
            : PublishRefusal.For(status, targets, topics, retryAfter: null, single, key, contentType, bodyLength: 0, services.Options, PublishSurface.Rest)
                .Answer(context.Response);
    }

    private static ValidationProblem InvalidContentType(string error) => Problems.Invalid("Content-Type", error);

    /// <summary>
    /// Reads <c>If-Match</c>: absent or <c>*</c> means any incarnation; one entity tag (weak or strong, the
    /// comparison is by value) names the epoch the publisher expects, and after a colon the version (the last
    /// message id; a state topic's document version) it must still be at: a compare-and-set.
    /// </summary>
    private static bool TryParseIfMatch(HttpRequest request, out string? epoch, out long? version, out string error)
    {
        epoch = null;
        version = null;
        error = "";
        var values = request.Headers.IfMatch;
        if (values.Count == 0)
        {
            return true;
        }
        var text = values.ToString().Trim();
        if (text == "*")
        {
            return true;
        }
        if (text.StartsWith("W/", StringComparison.Ordinal))
        {
            text = text[2..];
        }
        if (text.Length >= 2 && text[0] == '"' && text[^1] == '"')
        {
            var tag = text[1..^1];
            var colon = tag.IndexOf(':', StringComparison.Ordinal);
            if (colon < 0 && EpochText.IsValid(tag))
            {
                epoch = tag;
                return true;
            }
            if (colon > 0 && EpochText.IsValid(tag.AsSpan(0, colon)) && PlainInteger.TryParse(tag.AsSpan(colon + 1), out long parsed) && parsed >= 0)
            {
                epoch = tag[..colon];
                version = parsed;
                return true;
            }
        }
        error = $"'{values}' is not one epoch in quotes, nor an epoch and a version: send If-Match: \"<epoch>\" (or \"<epoch>:<version>\" to write only while the topic is at that version) from the topic's info, its state's ETag or a publish answer, or leave If-Match out.";
        return false;
    }

    private static TopicResource WithWaitingPolls(TopicInfo topic, TopicSignals signals) =>
        TopicResource.From(topic, signals.WaitingOn(topic.TopicId));

    /// <summary>Reads the whole body into a pooled buffer; <see langword="null"/> when it exceeds <paramref name="maxBytes"/>.</summary>
    private static async ValueTask<PooledBody?> ReadBodyAsync(HttpContext context, int maxBytes, CancellationToken cancellationToken)
    {
        if (context.Request.ContentLength > maxBytes)
        {
            return null;
        }
        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } sizeLimit
            && sizeLimit.MaxRequestBodySize < maxBytes + 1L)
        {
            sizeLimit.MaxRequestBodySize = maxBytes + 1L;
        }

        var reader = context.Request.BodyReader;
        try
        {
            while (true)
            {
                var read = await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
                var buffer = read.Buffer;
                if (buffer.Length > maxBytes)
                {
                    reader.AdvanceTo(buffer.End);
                    return null;
                }
                if (read.IsCompleted)
                {
                    var body = new PooledBody((int)buffer.Length);
                    buffer.CopyTo(body.Array);
                    reader.AdvanceTo(buffer.End);
                    return body;
                }
                reader.AdvanceTo(buffer.Start, buffer.End);
            }
        }
        catch (BadHttpRequestException exception) when (exception.StatusCode == StatusCodes.Status413PayloadTooLarge)
        {
            return null;
        }
    }

    private static ILogger Logger(ILoggerFactory loggers) => loggers.CreateLogger("Laharsub.Topics");

    private static string CollectionUrl(HttpRequest request) => $"{request.PathBase}{request.Path.Value?.TrimEnd('/')}";

    /// <summary>A request body in an array rented from the shared pool.</summary>
    private readonly struct PooledBody(int length) : IDisposable
    {
        public byte[] Array { get; } = ArrayPool<byte>.Shared.Rent(length);
        public ReadOnlyMemory<byte> Memory => Array.AsMemory(0, length);
        public void Dispose() => ArrayPool<byte>.Shared.Return(Array);
    }
}
