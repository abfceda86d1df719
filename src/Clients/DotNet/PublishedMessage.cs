namespace Laharsub.Client;

/// <summary>Where a published message was stored.</summary>
/// <param name="TopicId">The topic it was published to.</param>
/// <param name="MessageId">Its final id: subscribers see the message under this id.</param>
public sealed record PublishedMessage(long TopicId, long MessageId);
