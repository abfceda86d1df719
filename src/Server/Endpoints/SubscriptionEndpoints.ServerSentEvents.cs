using System.Buffers;
using System.IO.Pipelines;
using System.Runtime.InteropServices;
using System.Text.Json;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Endpoints;

/// <summary>The subscription as a Server-Sent Events stream (docs/protocol.md, "Server-Sent Events").</summary>
internal static partial class SubscriptionEndpoints
{
    private const string EventStream = "text/event-stream";
    private const string LastEventIdHeader = "Last-Event-ID";

    /// <summary>Whether <c>Accept</c> names <c>text/event-stream</c> (with a q above 0).</summary>
    internal static bool AcceptsEventStream(HttpRequest request)
    {
        var accept = request.Headers.Accept;
        if (accept.Count == 0)
        {
            return false;
        }
        if (accept.Count == 1 && accept[0] is { } only && only.Equals(EventStream, StringComparison.OrdinalIgnoreCase))
        {
            return true;
        }
        if (!accept.ToString().Contains(EventStream, StringComparison.OrdinalIgnoreCase) || !MediaTypeHeaderValue.TryParseList(accept, out var accepted))
        {
            return false;
        }
        return accepted.Any(type => type.MediaType.Equals(EventStream, StringComparison.OrdinalIgnoreCase) && (type.Quality ?? 1) > 0);
    }

    private static Task StreamEventsAsync(HttpContext context, PollServices services, SubscriptionQuery query)
    {
        var subscriptions = query.Subscriptions;
        // An empty id resumes nothing (the standard's EventSource sends none then): the query's cursors stand.
        if (context.Request.Headers[LastEventIdHeader].ToString() is { Length: > 0 } lastEventId
            && ResumeFrom(lastEventId, subscriptions, services.Options) is { } error)
        {
            return Problems.Invalid(LastEventIdHeader, error).ExecuteAsync(context);
        }
        var response = context.Response;
        response.ContentType = EventStream;
        response.Headers.CacheControl = "no-store";
        // nginx buffers proxied responses unless told not to; a stream must arrive event by event.
        response.Headers["X-Accel-Buffering"] = "no";
        if (services.Access.CarriesToken(context))
        {
            // Copied now: the list is this thread's, reused by the next poll once this returns.
            return StreamUntilExpiryAsync(context, services, [.. subscriptions], query.Conflation, PresenceOf(context, services, query));
        }
        var wait = new SubscriptionWait(services.Streams.HeartbeatInterval, services.TimeProvider, context.RequestAborted, services.Lifetime.ApplicationStopping);
        services.Metrics.PollStarted();
        var target = new ResponseEventStream(context);
        var deadline = WriteDeadline(target, services);
        var running = services.Runner.RunAsync(CollectionsMarshal.AsSpan(subscriptions), services.Wire.JsonAnswerBytes, wait,
            new EventStreamSink(target, services, new StreamCursors(), deadline, CancellationToken.None), StreamPacing(services, query.Conflation),
            PresenceOf(context, services, query));
        return EndAsync(running, deadline);
    }

    /// <summary>A stream's pacing: the subscriber's conflation, counted from each delivery, and the server's batching window.</summary>
    internal static Pacing StreamPacing(PollServices services, Conflation conflation) => new(conflation, services.Streams.BatchWindow);

    private static async Task EndAsync(Task running, StreamWriteDeadline deadline)
    {
        using (deadline)
        {
            await running.ConfigureAwait(false);
        }
    }

    /// <summary>Ends the stream when a write waits longer than <c>MaxWriteWait</c> for its client to read.</summary>
    internal static StreamWriteDeadline WriteDeadline(IEventStreamTarget target, PollServices services) =>
        new(services.TimeProvider, services.Streams.MaxWriteWait, () =>
        {
            services.Metrics.PollEnded("too_slow", 0);
            target.Abort();
        });

    /// <summary>A stream opened with a token (Jwt mode): it ends, saying so, when the token expires.</summary>
    private static async Task StreamUntilExpiryAsync(HttpContext context, PollServices services, Subscription[] subscriptions, Conflation conflation,
        PresenceIdentity? member)
    {
        using var expiry = new StreamTokenExpiry(await services.Access.TokenExpiryAsync(context).ConfigureAwait(false), services.TimeProvider, context.RequestAborted);
        var wait = new SubscriptionWait(services.Streams.HeartbeatInterval, services.TimeProvider, expiry.Ended, services.Lifetime.ApplicationStopping);
        services.Metrics.PollStarted();
        var target = new ResponseEventStream(context);
        using var deadline = WriteDeadline(target, services);
        await services.Runner.RunAsync(subscriptions, services.Wire.JsonAnswerBytes, wait,
            new EventStreamSink(target, services, new StreamCursors(), deadline, expiry.Expired), StreamPacing(services, conflation), member).ConfigureAwait(false);
    }

    /// <summary>
    /// Resumes the query's subscriptions from a <c>Last-Event-ID</c>: the topics it names take its cursors,
    /// and the query's topics it does not name were deleted before the client lost the stream, so they are
    /// left out. Returns why the id is refused, or null.
    /// </summary>
    internal static string? ResumeFrom(string lastEventId, List<Subscription> subscriptions, LaharsubDeliveryOptions options)
    {
        var resumed = new List<Subscription>();
        if (SubscriptionQuery.ParseCursors(lastEventId, LastEventIdHeader, options, resumed) is { } error)
        {
            return error.Message;
        }
        foreach (var position in resumed)
        {
            if (!subscriptions.Exists(subscription => subscription.TopicId == position.TopicId))
            {
                return $"Last-Event-ID names topic {position.TopicId}, which the query does not: resume with the URL the stream was opened with.";
            }
        }
        subscriptions.Clear();
        subscriptions.AddRange(resumed);
        return null;
    }

    /// <summary>
    /// A stream's positions as the <c>topics</c> array of an SSE <c>open</c> event or a WebSocket
    /// <c>subscribed</c> frame: each topic's id, epoch and cursor (<c>from</c>).
    /// </summary>
    private static void WritePositions(Utf8JsonWriter json, Subscription[] positions)
    {
        json.WriteStartArray("topics"u8);
        foreach (var position in positions)
        {
            json.WriteStartObject();
            json.WriteNumber("topicId"u8, position.TopicId);
            if (position.Epoch is { } epoch)
            {
                json.WriteString("epoch"u8, epoch);
            }
            if (position.From is { } from)
            {
                json.WriteNumber("from"u8, from);
            }
            json.WriteEndObject();
        }
        json.WriteEndArray();
    }

    /// <summary>Writes a subscription's deliveries as events, each with the cursors to resume from after it.</summary>
    internal readonly struct EventStreamSink(IEventStreamTarget target, PollServices services, StreamCursors cursors, StreamWriteDeadline deadline,
        CancellationToken tokenExpired) : ISubscriptionSink
    {
        private static ReadOnlySpan<byte> IdField => "id: "u8;
        private static ReadOnlySpan<byte> DataField => "\ndata: "u8;
        private static ReadOnlySpan<byte> EventEnd => "\n\n"u8;
        private static ReadOnlySpan<byte> NoticeEvent => "event: notice\n"u8;
        private static ReadOnlySpan<byte> OpenEvent => "event: open\n"u8;
        private static ReadOnlySpan<byte> Heartbeat => ": heartbeat\n\n"u8;

        public bool WantsPositions => true;

        public async ValueTask<bool> PositionedAsync(Subscription[] positions)
        {
            cursors.Reset(positions);
            var output = target.Events;
            Write(output, $"retry: {(long)services.Streams.ReconnectDelay.TotalMilliseconds}\n\n");
            output.Write(OpenEvent);
            WriteId(output);
            output.Write(DataField);
            using (var json = new Utf8JsonWriter(output))
            {
                json.WriteStartObject();
                WritePositions(json, positions);
                json.WriteEndObject();
            }
            output.Write(EventEnd);
            return await FlushAsync().ConfigureAwait(false);
        }

        public async ValueTask<bool> DeliverAsync(PollResult result)
        {
            if (result.RefusedTopicId is not null)
            {
                services.Metrics.PollEnded(result.RefusedOutcome!, 0);
                await target.RefuseAsync(result, services.Options.Presence.MaxMembersPerTopic).ConfigureAwait(false);
                return false;
            }
            // Only on the pipeline in practice: the fast path leaves streams to it while Laharsub is traced.
            using var activity = LaharsubActivitySource.StartDelivery("sse", result.Messages);
            var output = target.Events;
            foreach (var notice in result.Notices)
            {
                cursors.Apply(notice);
                output.Write(NoticeEvent);
                WriteId(output);
                output.Write(DataField);
                output.Write(WireFormat.EncodeNotice(notice));
                output.Write(EventEnd);
            }
            // A delivery may be MaxBytesPerPoll: sent in parts of MaxBufferedBytes, so that a client that does
            // not read holds at most one part (and the transport's buffer) on the server.
            var unsent = 0L;
            foreach (var message in result.Messages)
            {
                if (unsent >= services.Streams.MaxBufferedBytes)
                {
                    if (!await FlushAsync().ConfigureAwait(false))
                    {
                        return false;
                    }
                    // A target may write its next events elsewhere after a send (the fast path lets a grown buffer go).
                    output = target.Events;
                    unsent = 0;
                }
                cursors.Apply(message);
                WriteId(output);
                output.Write(DataField);
                var element = WireFormat.JsonElement(message);
                output.Write(element);
                output.Write(EventEnd);
                unsent += element.Length;
            }
            if (!await FlushAsync().ConfigureAwait(false))
            {
                return false;
            }
            services.Metrics.StreamWrote(result.Messages);
            return true;
        }

        public async ValueTask<bool> WaitEndedAsync(WaitEnd reason)
        {
            switch (reason)
            {
                case WaitEnd.TimedOut:
                    target.Events.Write(Heartbeat);
                    return await FlushAsync().ConfigureAwait(false);
                case WaitEnd.Stopping:
                    services.Metrics.PollEnded("shutdown", 0);
                    Write(target.Events,
                        "event: reconnect\ndata: {\"reason\":\"stopping\",\"detail\":\"The server is stopping; reconnect (another instance will answer) and resume from your cursors.\"}\n\n");
                    await FlushAsync().ConfigureAwait(false);
                    return false;
                case WaitEnd.ClientGone when tokenExpired.IsCancellationRequested && !target.ClientGone.IsCancellationRequested:
                    services.Metrics.PollEnded("token_expired", 0);
                    Write(target.Events,
                        "event: reconnect\ndata: {\"reason\":\"tokenExpired\",\"detail\":\"The stream's token expired; reconnect with a fresh token and resume from your cursors.\"}\n\n");
                    await FlushAsync().ConfigureAwait(false);
                    return false;
                default:
                    services.Metrics.PollEnded("closed", 0);
                    return false;
            }
        }

        public void Failed() => services.Metrics.PollEnded("error", 0);

        private void WriteId(IBufferWriter<byte> output)
        {
            output.Write(IdField);
            cursors.WriteTo(output);
        }

        /// <summary>
        /// Flushes, for at most <c>MaxWriteWait</c>: a client that does not read is ended rather than
        /// waited for (it resumes from its last id). False when the stream is over.
        /// </summary>
        private async ValueTask<bool> FlushAsync()
        {
            var sending = target.SendAsync();
            try
            {
                var sent = sending.IsCompleted ? sending.Result : await deadline.WatchAsync(sending).ConfigureAwait(false);
                return sent && !deadline.Passed;
            }
            catch (Exception) when (deadline.Passed)
            {
                // Ended as too slow (counted then): the aborted connection failed the flush.
                return false;
            }
        }

        private static void Write(IBufferWriter<byte> output, string ascii)
        {
            var span = output.GetSpan(ascii.Length);
            var written = System.Text.Encoding.ASCII.GetBytes(ascii, span);
            output.Advance(written);
        }
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
