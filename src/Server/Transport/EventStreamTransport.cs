using Laharsub.Server.Delivery;

namespace Laharsub.Server.Transport;

/// <summary>
/// The subscription as a Server-Sent Events stream (docs/protocol.md, "Server-Sent Events"), for both front-ends:
/// where it resumes from and when a write has waited too long; <see cref="EventStreamSink"/>
/// writes its events to an <see cref="IEventStreamTarget"/>.
/// </summary>
internal static class EventStreamTransport
{
    /// <summary>The stream's media type, which <c>Accept</c> names to ask for it.</summary>
    public const string ContentType = "text/event-stream";

    /// <summary>The header an <c>EventSource</c> sends back with the last event's id, the cursors to resume from.</summary>
    public const string LastEventIdHeader = "Last-Event-ID";

    /// <summary>
    /// Resumes the query's subscriptions from a <c>Last-Event-ID</c>: the topics it names take its cursors,
    /// and the query's topics it does not name were deleted before the client lost the stream, so they are
    /// left out. Returns why the id is refused, or null.
    /// </summary>
    public static string? ResumeFrom(string lastEventId, List<Subscription> subscriptions, LaharsubDeliveryOptions options)
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
    /// Starts the stream of <paramref name="subscriptions"/> (which the runner copies before it returns) to
    /// <paramref name="target"/>: a heartbeat at each quiet interval, until <paramref name="ended"/> (its client gone,
    /// or <paramref name="expiry"/>'s end, which the sink tells its client), the server stops, or
    /// <paramref name="deadline"/> (<see cref="WriteDeadline"/>, the caller's to dispose) ends a write that waited too long.
    /// </summary>
    public static Task Start(SubscriptionServices services, IEventStreamTarget target, ReadOnlySpan<Subscription> subscriptions, Conflation conflation,
        PresenceIdentity? member, StreamWriteDeadline deadline, CancellationToken ended, StreamExpiry? expiry = null)
    {
        var wait = new SubscriptionWait(services.Streams.HeartbeatInterval, services.TimeProvider, ended, services.Lifetime.ApplicationStopping);
        services.Metrics.PollStarted();
        return services.Runner.RunAsync(subscriptions, services.Wire.JsonAnswerBytes, wait,
            new EventStreamSink(target, services, new StreamCursors(), deadline, expiry?.Redecide == true, expiry?.Expired ?? default), TransportPacing.Stream(services, conflation), member);
    }

    /// <summary>Ends the stream when a write waits longer than <c>MaxWriteWait</c> for its client to read.</summary>
    public static StreamWriteDeadline WriteDeadline(IEventStreamTarget target, SubscriptionServices services) =>
        new(services.TimeProvider, services.Streams.MaxWriteWait, () =>
        {
            services.Metrics.PollEnded("too_slow", 0);
            target.Abort();
        });
}
