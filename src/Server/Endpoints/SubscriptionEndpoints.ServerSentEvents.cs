using System.Buffers;
using System.Runtime.InteropServices;
using Laharsub.Server.Delivery;
using Laharsub.Server.Transport;
using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Endpoints;

/// <summary>The subscription as a Server-Sent Events stream (docs/protocol.md, "Server-Sent Events").</summary>
internal static partial class SubscriptionEndpoints
{
    /// <summary>Whether <c>Accept</c> names <c>text/event-stream</c> (with a q above 0).</summary>
    internal static bool AcceptsEventStream(HttpRequest request)
    {
        var accept = request.Headers.Accept;
        if (accept.Count == 0)
        {
            return false;
        }
        if (accept.Count == 1 && accept[0] is { } only && only.Equals(EventStreamTransport.ContentType, StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }
        if (!accept.ToString().Contains(EventStreamTransport.ContentType, StringComparison.OrdinalIgnoreCase) || !MediaTypeHeaderValue.TryParseList(accept, out var accepted))
        {
            return false;
        }
        return accepted.Any(type => type.MediaType.Equals(EventStreamTransport.ContentType, StringComparison.OrdinalIgnoreCase) && (type.Quality ?? 1) > 0);
    }

    private static Task StreamEventsAsync(HttpContext context, SubscriptionServices services, SubscriptionQuery query)
    {
        var subscriptions = query.Subscriptions;
        // An empty id resumes nothing (the standard's EventSource sends none then): the query's cursors stand.
        if (context.Request.Headers[EventStreamTransport.LastEventIdHeader].ToString() is { Length: > 0 } lastEventId
            && EventStreamTransport.ResumeFrom(lastEventId, subscriptions, services.Options) is { } error)
        {
            return Problems.Invalid(EventStreamTransport.LastEventIdHeader, error).ExecuteAsync(context);
        }
        var response = context.Response;
        response.ContentType = EventStreamTransport.ContentType;
        response.Headers.CacheControl = "no-store";
        // nginx buffers proxied responses unless told not to; a stream must arrive event by event.
        response.Headers["X-Accel-Buffering"] = "no";
        if (services.Access.EndsStreams(context))
        {
            // Copied now: the list is this thread's, reused by the next poll once this returns.
            return StreamUntilExpiryAsync(context, services, [.. subscriptions], query.Conflation, PresenceOf(context, services, query));
        }
        var target = new ResponseEventStream(context);
        var deadline = EventStreamTransport.WriteDeadline(target, services);
        var running = EventStreamTransport.Start(services, target, CollectionsMarshal.AsSpan(subscriptions), query.Conflation, PresenceOf(context, services, query),
            deadline, context.RequestAborted);
        return EndAsync(running, deadline);
    }

    private static async Task EndAsync(Task running, StreamWriteDeadline deadline)
    {
        using (deadline)
        {
            await running.ConfigureAwait(false);
        }
    }

    /// <summary>A stream whose access ends (a token's expiry, or Host and Backend modes' decision lifetime): it ends then, saying so.</summary>
    private static async Task StreamUntilExpiryAsync(HttpContext context, SubscriptionServices services, Subscription[] subscriptions, Conflation conflation,
        PresenceIdentity? member)
    {
        using var expiry = new StreamExpiry(await services.Access.StreamLifetimeAsync(context, services.TimeProvider).ConfigureAwait(false), services.TimeProvider, context.RequestAborted);
        var target = new ResponseEventStream(context);
        using var deadline = EventStreamTransport.WriteDeadline(target, services);
        await EventStreamTransport.Start(services, target, subscriptions, conflation, member, deadline, expiry.Ended, expiry).ConfigureAwait(false);
    }

    /// <summary>A stream on the pipeline: the events go into the response body, which Kestrel frames.</summary>
    private sealed class ResponseEventStream(HttpContext context) : IEventStreamTarget
    {
        public IBufferWriter<byte> Events => context.Response.BodyWriter;

        public CancellationToken ClientGone => context.RequestAborted;

        public async ValueTask<bool> SendAsync()
        {
            var flushed = await context.Response.BodyWriter.FlushAsync().ConfigureAwait(false);
            return !flushed.IsCompleted && !flushed.IsCanceled && !context.RequestAborted.IsCancellationRequested;
        }

        public Task RefuseAsync(PollResult refused, int maxMembers) => Problems.Refused(refused, maxMembers).ExecuteAsync(context);

        public void Abort() => context.Abort();
    }
}
