using System.Diagnostics;
using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Limits;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Endpoints;

/// <summary>The long poll: one request waits on many topics at once.</summary>
internal static partial class SubscriptionEndpoints
{
    public static RouteGroupBuilder MapSubscriptions(this RouteGroupBuilder group)
    {
        // The poll's services come from the application's services, not as handler parameters: minimal
        // APIs resolve those from the request's services, which opens a DI scope per request, and a held
        // poll keeps that scope for its whole wait (docs/performance-history.md). All of them are singletons,
        // resolved on the first poll rather than here so that mapping does not construct the store.
        var services = ((IEndpointRouteBuilder)group).ServiceProvider;
        SubscriptionServices? resolved = null;
        // A Delegate, not a RequestDelegate, so that it is a route handler: the waiting-poll limit is an
        // endpoint filter, and those apply to route handlers only.
        Delegate poll = (HttpContext context) => Poll(context, resolved ??= new SubscriptionServices(services));
        SubscribedTopics topics = (context, topicIds) => ReadTopics(context, resolved ??= new SubscriptionServices(services), topicIds);
        group.MapGet("/subscriptions", poll).SubscriptionConventions(topics).DescribePoll();
        // A WebSocket over HTTP/2 (RFC 8441) is an extended CONNECT to the same URL, which UseWebSockets()
        // accepts as it accepts a GET upgrade. An endpoint of its own, so that the poll's path stays as it
        // is and the API description (OpenAPI has no CONNECT operation) does not change.
        Delegate connect = (HttpContext context) => context.WebSockets.IsWebSocketRequest
            ? Poll(context, resolved ??= new SubscriptionServices(services))
            : RefuseConnect(context);
        group.MapMethods("/subscriptions", [HttpMethods.Connect], connect).SubscriptionConventions(topics).ExcludeFromDescription();
        return group;
    }

    private static RouteHandlerBuilder SubscriptionConventions(this RouteHandlerBuilder endpoint, SubscribedTopics topics) => endpoint
        .RequireAccess(AccessRule.Poll, topics)
        .LimitWaitingPollsPerClient()
        .WithMetadata(WritesEveryAnswer.Instance);

    /// <summary>
    /// A CONNECT that is not a WebSocket (another <c>:protocol</c>, a WebSocket version other than 13, or an
    /// application without <c>UseWebSockets()</c>): a problem saying what the URL takes, rather than a poll
    /// that no CONNECT client reads.
    /// </summary>
    private static Task RefuseConnect(HttpContext context)
    {
        var protocol = context.Features.Get<IHttpExtendedConnectFeature>()?.Protocol;
        if (string.Equals(protocol, "websocket", StringComparison.OrdinalIgnoreCase))
        {
            return context.Features.Get<IHttpWebSocketFeature>() is null
                ? Problems.Status(StatusCodes.Status501NotImplemented, "WebSockets not served",
                    "This application does not accept WebSockets (it does not call UseWebSockets()): poll or stream the subscription URL with GET instead.")
                    .ExecuteAsync(context)
                : Problems.Invalid(HeaderNames.SecWebSocketVersion,
                    $"A WebSocket over HTTP/2 sends Sec-WebSocket-Version 13; this one sent '{Excerpt(context.Request.Headers.SecWebSocketVersion.ToString())}'.")
                    .ExecuteAsync(context);
        }
        return Problems.Invalid(":protocol",
            $"A CONNECT to the subscription URL opens a WebSocket over HTTP/2 (RFC 8441: :protocol websocket, Sec-WebSocket-Version 13); this one asked for '{Excerpt(protocol ?? "")}'. Poll or stream with GET.")
            .ExecuteAsync(context);
    }

    /// <summary>
    /// A GET that asks for a WebSocket (<c>Upgrade: websocket</c>) in a handshake that <c>UseWebSockets()</c> does
    /// not accept: refused at once, rather than held as the long poll it would otherwise be. An unknown version gets
    /// RFC 6455's (4.2.2) <c>426</c> with the version this server speaks; null for any other <c>Upgrade</c>.
    /// </summary>
    private static IResult? RefuseUpgrade(HttpContext context)
    {
        var headers = context.Request.Headers;
        if (!headers.Upgrade.ToString().Contains("websocket", StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }
        if (context.Features.Get<IHttpWebSocketFeature>() is null)
        {
            return Problems.Status(StatusCodes.Status501NotImplemented, "WebSockets not served",
                "This application does not accept WebSockets (it does not call UseWebSockets()): poll or stream the subscription URL without Upgrade instead.");
        }
        var version = headers.SecWebSocketVersion.ToString();
        if (version != "13")
        {
            var detail = $"This server speaks WebSocket version 13 (RFC 6455); the handshake's Sec-WebSocket-Version was '{Excerpt(version)}'. Upgrade with Sec-WebSocket-Version: 13, or poll or stream without Upgrade.";
            context.Response.Headers.SecWebSocketVersion = "13";
            context.Response.Headers.Upgrade = "websocket";
            context.Response.Headers.Connection = "Upgrade";
            return TypedResults.Problem(title: "WebSocket version not supported", detail: detail, statusCode: StatusCodes.Status426UpgradeRequired,
                extensions: new Dictionary<string, object?> { ["errors"] = new Dictionary<string, string[]> { [HeaderNames.SecWebSocketVersion] = [detail] } });
        }
        return headers.Connection.ToString().Contains("upgrade", StringComparison.OrdinalIgnoreCase)
            ? Problems.Invalid(HeaderNames.SecWebSocketKey, $"A WebSocket handshake sends Sec-WebSocket-Key, 16 random bytes in base64 (RFC 6455); this one sent '{Excerpt(headers.SecWebSocketKey.ToString())}'.")
            : Problems.Invalid(HeaderNames.Connection, $"A WebSocket handshake sends Connection: Upgrade with Upgrade: websocket (RFC 6455); this one sent Connection '{Excerpt(headers.Connection.ToString())}'.");
    }

    [ThreadStatic]
    private static List<Subscription>? t_subscriptions;

    /// <summary>The topics a poll names, for access control; false when the query is invalid.</summary>
    private static bool ReadTopics(HttpContext context, SubscriptionServices services, List<long> topicIds)
    {
        var query = SubscriptionQuery.Parse(context.Request.QueryString.Value, services.Options, [], services.IdentityFromToken);
        if (query.Error is not null)
        {
            return false;
        }
        foreach (var subscription in query.Subscriptions)
        {
            topicIds.Add(subscription.TopicId);
        }
        return true;
    }

    /// <summary>
    /// Who a subscription is for presence: the query's <c>client</c> in Open mode, the token's subject (which
    /// access control authenticated) in Jwt mode; null for an anonymous observer.
    /// </summary>
    internal static PresenceIdentity? PresenceOf(HttpContext context, SubscriptionServices services, SubscriptionQuery query) =>
        query.PresenceOf(services.IdentityFromToken, context.User.Identity as LaharsubIdentity);

    /// <remarks>
    /// Not async: it validates, then returns the runner's own task, in whose state machine
    /// <see cref="LongPollSink{TResponder}"/> answers. A handler that awaited the runner would keep a state machine of its
    /// own for a held poll's whole wait, and one that returned a result would add the request delegate's.
    /// <see cref="DescribePoll"/> declares the answers.
    /// </remarks>
    private static Task Poll(HttpContext context, SubscriptionServices services)
    {
        // The subscriptions are parsed into this thread's list, which the runner copies before it
        // returns: a poll allocates no list, array or query object of its own.
        var subscriptions = t_subscriptions ??= [];
        try
        {
            return StartPoll(context, services, SubscriptionQuery.Parse(context.Request.QueryString.Value, services.Options, subscriptions, services.IdentityFromToken));
        }
        finally
        {
            // Lets go of the epoch strings.
            subscriptions.Clear();
        }
    }

    private static Task StartPoll(HttpContext context, SubscriptionServices services, SubscriptionQuery query)
    {
        context.Response.Headers.CacheControl = "no-store";
        if (context.WebSockets.IsWebSocketRequest && (query.Error is null || query.NamesNoTopic))
        {
            // Copied now: the query's list is this thread's, reused by the next poll once this returns.
            return RunWebSocketAsync(context, services, query.Error is null ? [.. query.Subscriptions] : [], query.Conflation, PresenceOf(context, services, query));
        }
        if (context.Request.Headers.Upgrade.Count > 0 && RefuseUpgrade(context) is { } refused)
        {
            return refused.ExecuteAsync(context);
        }
        if (query.Error is not null)
        {
            return Problems.Invalid(query.ErrorParameter!, query.Error).ExecuteAsync(context);
        }
        if (AcceptsEventStream(context.Request))
        {
            return StreamEventsAsync(context, services, query);
        }
        if (Negotiate(context.Request) is not { } format)
        {
            return Problems.Status(StatusCodes.Status406NotAcceptable, "Not acceptable",
                $"Polls answer in application/json (the default) or multipart/mixed; the request's Accept ('{Excerpt(context.Request.Headers.Accept.ToString())}') names neither, or is not a valid list of media types with q from 0 to 1.")
                .ExecuteAsync(context);
        }

        return LongPollTransport.Start(services, query, format, new PollResponder(context, services, format), PresenceOf(context, services, query), context.RequestAborted);
    }

    /// <summary>A long poll's answers on the pipeline's response (<see cref="LongPollSink{TResponder}"/> chooses them).</summary>
    private readonly struct PollResponder(HttpContext context, SubscriptionServices services, PollFormat format) : IPollResponder
    {
        public ValueTask WriteMessagesAsync(PollResult result) =>
            new(PollResponseWriter.WriteAsync(context.Response, result, format, services.Wire, context.RequestAborted));

        public ValueTask WriteRefusedAsync(PollResult refused, Activity? activity) =>
            new(Problems.Refused(refused, services.Options.Presence.MaxMembersPerTopic).ExecuteAsync(context));

        public ValueTask WriteNoContentAsync(bool closeConnection)
        {
            if (closeConnection)
            {
                context.Response.Headers.Connection = "close";
            }
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return default;
        }

        public void ClientGone()
        {
        }
    }

    /// <summary>Chooses the response format from <c>Accept</c>: JSON by default, multipart when preferred, null if neither is acceptable.</summary>
    internal static PollFormat? Negotiate(HttpRequest request)
    {
        var accept = request.Headers.Accept;
        if (accept.Count == 0)
        {
            return PollFormat.Json;
        }
        // What clients send almost always: one plain media type, recognised without parsing it into objects.
        if (accept.Count == 1 && accept[0] is { } only)
        {
            if (only.Equals("application/json", StringComparison.OrdinalIgnoreCase) || only == "*/*")
            {
                return PollFormat.Json;
            }
            if (only.Equals("multipart/mixed", StringComparison.OrdinalIgnoreCase))
            {
                return PollFormat.Multipart;
            }
        }
        // A header that does not parse, or a q that is not a number from 0 to 1, accepts nothing we can
        // name: 406 rather than guessing JSON.
        if (!MediaTypeHeaderValue.TryParseStrictList(accept, out var accepted))
        {
            return null;
        }
        if (accepted.Count == 0)
        {
            return PollFormat.Json;
        }
        PollFormat? best = null;
        double bestQuality = 0;
        foreach (var mediaType in accepted)
        {
            var hasQ = mediaType.Parameters.Any(p => p.Name.Equals("q", StringComparison.OrdinalIgnoreCase));
            if (hasQ && mediaType.Quality is not (>= 0 and <= 1))
            {
                return null;
            }
            var quality = mediaType.Quality ?? 1.0;
            if (quality <= bestQuality || Classify(mediaType) is not { } format)
            {
                continue;
            }
            best = format;
            bestQuality = quality;
        }
        return best;
    }

    /// <summary>The start of a header value, so that a 10 KB header does not come back in a problem detail.</summary>
    private static string Excerpt(string value) => value.Length <= 100 ? value : string.Concat(value.AsSpan(0, 100), "...");

    private static PollFormat? Classify(MediaTypeHeaderValue mediaType)
    {
        var type = mediaType.Type;
        var subType = mediaType.SubType;
        if (type.Equals("*", StringComparison.Ordinal))
        {
            return PollFormat.Json;
        }
        if (type.Equals("application", StringComparison.OrdinalIgnoreCase)
            && (subType.Equals("json", StringComparison.OrdinalIgnoreCase) || subType.Equals("*", StringComparison.Ordinal)))
        {
            return PollFormat.Json;
        }
        if (type.Equals("multipart", StringComparison.OrdinalIgnoreCase)
            && (subType.Equals("mixed", StringComparison.OrdinalIgnoreCase) || subType.Equals("*", StringComparison.Ordinal)))
        {
            return PollFormat.Multipart;
        }
        return null;
    }
}
