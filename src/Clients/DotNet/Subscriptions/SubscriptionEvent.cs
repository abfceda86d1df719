namespace Laharsub.Client;

/// <summary>
/// Something a subscription delivers for one topic: a <see cref="LaharsubMessage"/>, or a notice
/// (<see cref="GapNotice"/>, <see cref="ConflatedNotice"/>, <see cref="ResetNotice"/>, <see cref="TopicDeletedNotice"/>,
/// <see cref="TopicNotFoundNotice"/>). Notices are delivered like messages, in order, so that a
/// reader handles them with a <c>switch</c> and the subscription goes on.
/// </summary>
public abstract class SubscriptionEvent
{
    private protected SubscriptionEvent(long topicId, string? epoch = null)
    {
        TopicId = topicId;
        Epoch = epoch;
    }

    /// <summary>The topic this event is about.</summary>
    public long TopicId { get; }

    /// <summary>
    /// The epoch of the topic incarnation the event belongs to (for a <see cref="ResetNotice"/>, the
    /// current one); <see langword="null"/> from a server without epochs, and for a <see cref="TopicNotFoundNotice"/>.
    /// </summary>
    public string? Epoch { get; }
}
