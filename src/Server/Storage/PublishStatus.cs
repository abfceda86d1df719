namespace Laharsub.Server.Storage;

/// <summary>What happened to a message handed to <see cref="ILaharsubStore.PublishAsync"/>.</summary>
public enum PublishStatus
{
    /// <summary>Stored under <see cref="PublishResult.MessageId"/>.</summary>
    Published,
    /// <summary>No such topic; nothing stored.</summary>
    TopicNotFound,
    /// <summary>Larger than <c>MaxMessageBytes</c>, or empty; nothing stored.</summary>
    InvalidSize,
    /// <summary><c>MaxRetainedBytes</c> reached; nothing stored or dropped.</summary>
    StorageFull,
    /// <summary>The topic is another incarnation than the one asked for; nothing stored.</summary>
    EpochMismatch,
    /// <summary>
    /// The content type is empty or holds a line break or another control character (see
    /// <see cref="Message.IsValidContentType"/>), which no part header of a poll answer can carry; nothing stored.
    /// </summary>
    InvalidContentType,
}
