namespace Laharsub.Client;

/// <summary>The topic was deleted. The subscription has dropped it and goes on with its other topics.</summary>
public sealed class TopicDeletedNotice : SubscriptionEvent
{
    internal TopicDeletedNotice(long topicId) : base(topicId)
    {
    }

    /// <inheritdoc/>
    public override string ToString() => $"Topic {TopicId} was deleted";
}
