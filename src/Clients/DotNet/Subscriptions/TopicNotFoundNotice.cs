namespace Laharsub.Client;

/// <summary>
/// The server does not know the topic (it answered a poll with <c>404</c> naming it): it was never
/// created, was deleted while no poll was waiting, or was lost in a restart without persistence. The
/// subscription has dropped it and goes on with its other topics.
/// </summary>
public sealed class TopicNotFoundNotice : SubscriptionEvent
{
    internal TopicNotFoundNotice(long topicId, string? detail) : base(topicId) => Detail = detail;

    /// <summary>The server's explanation, from its problem details.</summary>
    public string? Detail { get; }

    /// <inheritdoc/>
    public override string ToString() => $"Topic {TopicId} was not found: {Detail}";
}
