namespace Laharsub.Client;

/// <summary>
/// The subscription's cursor was beyond the topic's end: typically the server restarted without
/// persistence and the topic id was created again, so its message ids started over. The subscription
/// continues from <see cref="FirstMessageId"/>; messages that follow for this topic are the new ones.
/// </summary>
public sealed class ResetNotice : SubscriptionEvent
{
    internal ResetNotice(long topicId, long requestedFrom, long firstMessageId, long lastMessageId) : base(topicId)
    {
        RequestedFrom = requestedFrom;
        FirstMessageId = firstMessageId;
        LastMessageId = lastMessageId;
    }

    /// <summary>The cursor the subscription asked for.</summary>
    public long RequestedFrom { get; }

    /// <summary>Where the topic's retained messages start now; the subscription continues here.</summary>
    public long FirstMessageId { get; }

    /// <summary>The topic's last message id now (0 if it has none).</summary>
    public long LastMessageId { get; }

    /// <inheritdoc/>
    public override string ToString() => $"Reset of topic {TopicId}: asked from {RequestedFrom}, the topic now holds {FirstMessageId}..{LastMessageId}";
}
