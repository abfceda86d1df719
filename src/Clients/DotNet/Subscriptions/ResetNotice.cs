namespace Laharsub.Client;

/// <summary>
/// The topic is not where the subscription's cursor said: either it is another incarnation of the topic
/// id (<see cref="EpochChanged"/>: the topic was deleted and created again, or the server lost its data
/// and the id was reused), or the cursor lies beyond the topic's end (typically a server restart without
/// persistence, seen by a subscription that did not know the epoch). Messages the subscription had not
/// read from the old incarnation are lost. The subscription continues from <see cref="FirstMessageId"/>
/// in the incarnation <see cref="SubscriptionEvent.Epoch"/>; the messages that follow for this topic
/// are the new ones.
/// </summary>
public sealed class ResetNotice : SubscriptionEvent
{
    internal ResetNotice(long topicId, string? epoch, bool epochChanged, long requestedFrom, string? requestedEpoch, long firstMessageId, long lastMessageId)
        : base(topicId, epoch)
    {
        EpochChanged = epochChanged;
        RequestedFrom = requestedFrom;
        RequestedEpoch = requestedEpoch;
        FirstMessageId = firstMessageId;
        LastMessageId = lastMessageId;
    }

    /// <summary>
    /// <see langword="true"/> when the topic is another incarnation than the epoch the subscription asked
    /// for (<see cref="RequestedEpoch"/>; the new one is <see cref="SubscriptionEvent.Epoch"/>);
    /// <see langword="false"/> when the reset is because the cursor lay beyond the topic's end.
    /// </summary>
    public bool EpochChanged { get; }

    /// <summary>The cursor the subscription asked for (0 when it had none).</summary>
    public long RequestedFrom { get; }

    /// <summary>The epoch the subscription asked for, when <see cref="EpochChanged"/>; otherwise <see langword="null"/>.</summary>
    public string? RequestedEpoch { get; }

    /// <summary>Where the topic's retained messages start now; the subscription continues here.</summary>
    public long FirstMessageId { get; }

    /// <summary>The topic's last message id now (0 if it has none).</summary>
    public long LastMessageId { get; }

    /// <inheritdoc/>
    public override string ToString() => EpochChanged
        ? $"Reset of topic {TopicId}: asked for epoch {RequestedEpoch} from {RequestedFrom}, the topic is now epoch {Epoch} holding {FirstMessageId}..{LastMessageId}"
        : $"Reset of topic {TopicId}: asked from {RequestedFrom}, the topic now holds {FirstMessageId}..{LastMessageId}";
}
