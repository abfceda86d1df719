using System.Diagnostics;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Diagnostics;

/// <summary>
/// Laharsub's traces, on the <c>Laharsub.Server</c> activity source: a <c>publish</c> activity per
/// accepted message, a <c>poll</c> activity per long poll and a <c>deliver</c> activity per batch of
/// messages a stream (SSE or WebSocket) writes, tagged with the OpenTelemetry messaging conventions. A
/// poll's or delivery's span links to the spans of the publishes whose messages it carries, also across
/// instances that share a store (the store keeps each publish's trace context with its message, see
/// <see cref="Message.TraceContext"/>), and shares their <c>messaging.destination.name</c> (the topic id)
/// and message ids (<c>messaging.message.id</c> on the publish, <c>laharsub.message.ids</c> on the poll).
/// </summary>
internal static class LaharsubActivitySource
{
    /// <summary>The activity source's name, <see cref="LaharsubDiagnostics.ActivitySourceName"/>.</summary>
    public const string Name = LaharsubDiagnostics.ActivitySourceName;

    /// <summary>At most this many ids are listed on a poll activity; <c>messaging.batch.message_count</c> has the total.</summary>
    internal const int MaxListedMessageIds = 100;

    /// <summary>
    /// At most this many links to publishes on one poll or delivery span: a catch-up read of hundreds of
    /// messages would otherwise make one huge span. <c>laharsub.message.ids</c> and
    /// <c>messaging.batch.message_count</c> still say what it carried.
    /// </summary>
    internal const int MaxLinks = 32;

    private static readonly ActivitySource Source = new(Name);

    /// <summary>Whether anything records Laharsub's activities now (the fast path then gives each request the hosting activity they start under).</summary>
    internal static bool IsListenedTo => Source.HasListeners();

    /// <summary>Starts a publish activity (null, at no cost, while nobody listens).</summary>
    internal static Activity? StartPublish(long topicId)
    {
        var activity = Start("publish", ActivityKind.Producer, "send");
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("messaging.destination.name", topicId);
        }
        return activity;
    }

    /// <summary>Tags the publish with the message's id and the topic's epoch once the store accepted it.</summary>
    internal static void Published(Activity? activity, long messageId, string epoch)
    {
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("messaging.message.id", messageId);
            activity.SetTag("laharsub.epoch", epoch);
        }
    }

    /// <summary>Starts a poll activity over <paramref name="topics"/> topics (null, at no cost, while nobody listens).</summary>
    internal static Activity? StartPoll(int topics)
    {
        var activity = Start("poll", ActivityKind.Consumer, "receive");
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("laharsub.poll.topics", topics);
        }
        return activity;
    }

    /// <summary>Tags a poll with how it ended and, when answered, the messages it carried as <c>topic:message</c> ids.</summary>
    internal static void PollEnded(Activity? activity, string outcome, IReadOnlyList<Message>? messages)
    {
        if (activity is not { IsAllDataRequested: true })
        {
            return;
        }
        activity.SetTag("laharsub.poll.outcome", outcome);
        if (outcome == "error")
        {
            activity.SetStatus(ActivityStatusCode.Error);
        }
        if (messages is not { Count: > 0 })
        {
            return;
        }
        TagMessages(activity, messages);
    }

    /// <summary>
    /// Starts a stream's <c>deliver</c> activity for a batch of messages it is about to write over
    /// <paramref name="transport"/> (<c>sse</c> or <c>websocket</c>), tagged and linked as a poll's;
    /// null, at no cost, while nobody listens or when the batch has no message (only notices).
    /// </summary>
    internal static Activity? StartDelivery(string transport, List<Message> messages)
    {
        if (messages.Count == 0)
        {
            return null;
        }
        var activity = Start("deliver", ActivityKind.Consumer, "receive");
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("laharsub.transport", transport);
            TagMessages(activity, messages);
        }
        return activity;
    }

    /// <summary>Starts an activity named after its operation, with the messaging tags every one has when its data is wanted; null while nobody listens.</summary>
    private static Activity? Start(string operation, ActivityKind kind, string operationType)
    {
        var activity = Source.StartActivity(operation, kind);
        if (activity is { IsAllDataRequested: true })
        {
            activity.SetTag("messaging.system", "laharsub");
            activity.SetTag("messaging.operation.type", operationType);
            activity.SetTag("messaging.operation.name", operation);
        }
        return activity;
    }

    /// <summary>Tags an activity with the messages it carried, and links it to up to <see cref="MaxLinks"/> of their publishes.</summary>
    private static void TagMessages(Activity activity, IReadOnlyList<Message> messages)
    {
        activity.SetTag("messaging.batch.message_count", messages.Count);
        var ids = new string[Math.Min(messages.Count, MaxListedMessageIds)];
        for (var i = 0; i < ids.Length; i++)
        {
            ids[i] = $"{messages[i].TopicId}:{messages[i].MessageId}";
        }
        activity.SetTag("laharsub.message.ids", ids);
        if (messages.Count == 1)
        {
            // The common case, a poll woken by one publish: the same tags the publish has.
            activity.SetTag("messaging.destination.name", messages[0].TopicId);
            activity.SetTag("messaging.message.id", messages[0].MessageId);
        }
        var links = 0;
        for (var i = 0; i < messages.Count && links < MaxLinks; i++)
        {
            // Added after the start (a sampler does not see them): the messages are known only once read.
            if (messages[i].TraceContext is var publisher && publisher != default)
            {
                activity.AddLink(new ActivityLink(publisher));
                links++;
            }
        }
    }
}
