namespace Laharsub.Client;

/// <summary>Where a published message was stored.</summary>
/// <param name="TopicId">The topic it was published to.</param>
/// <param name="MessageId">Its final id: subscribers see the message under this id.</param>
public sealed record PublishedMessage(long TopicId, long MessageId)
{
    /// <summary>
    /// The epoch of the topic incarnation that stored the message (see <see cref="CreatedTopic.Epoch"/>);
    /// <see langword="null"/> from a server without epochs.
    /// </summary>
    public string? Epoch { get; init; }
}
