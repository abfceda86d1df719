namespace Laharsub.Client;

/// <summary>
/// The topic was deleted (<see cref="SubscriptionEvent.Epoch"/> is the deleted incarnation's). The
/// subscription has dropped it and goes on with its other topics.
/// </summary>
public sealed class TopicDeletedNotice : SubscriptionEvent
{
    internal TopicDeletedNotice(long topicId, string? epoch) : base(topicId, epoch)
    {
    }

    /// <inheritdoc/>
    public override string ToString() => $"Topic {TopicId} was deleted";
}
