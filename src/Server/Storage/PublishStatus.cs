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
    /// <summary>
    /// Of a <see cref="ILaharsubStore.PublishManyAsync"/>: this topic would have taken the message, but another
    /// topic of the same publish refused it, so nothing was stored anywhere.
    /// </summary>
    NotAttempted,
    /// <summary>The idempotency key was recorded for another request (other topics, content type or body); nothing stored.</summary>
    IdempotencyKeyMismatch,
    /// <summary>A publish with the same idempotency key is still being stored; nothing stored by this one.</summary>
    IdempotencyKeyInProgress,
    /// <summary><see cref="LaharsubStoreOptions.MaxIdempotencyKeys"/> keys are recorded already; nothing stored.</summary>
    TooManyIdempotencyKeys,
    /// <summary>
    /// Of a <see cref="ILaharsubStore.PublishManyAsync"/>: the store keeps the topics where one atomic step
    /// cannot reach them all (the Redis store's buckets on a Redis Cluster); nothing stored.
    /// </summary>
    TopicsNotTogether,

    /// <summary>
    /// The topic is a presence companion topic (<see cref="TopicInfo.PresenceOf"/>), which only the server
    /// writes, through <see cref="IPresenceStore.PublishEventAsync"/>; nothing stored.
    /// </summary>
    PresenceTopic,

    /// <summary>
    /// The topic holds state (<see cref="TopicInfo.State"/>) and the content type is not <see cref="MergePatch.MediaType"/>:
    /// a state topic takes merge patches, or a whole document through <see cref="ILaharsubStore.ReplaceStateAsync"/>; nothing stored.
    /// </summary>
    NotAPatch,

    /// <summary>Of a write to a state topic: the body is not one JSON object (<see cref="MergePatch.Describe"/> says why); nothing stored.</summary>
    NotAnObject,

    /// <summary>Of a write to a state topic: the document would exceed <see cref="LaharsubStoreOptions.MaxStateBytes"/>; nothing stored.</summary>
    StateTooLarge,

    /// <summary>
    /// The topic's last message id (a state topic's version) is not <see cref="PublishTarget.IfVersion"/>; nothing stored.
    /// The result's <see cref="PublishResult.MessageId"/> and <see cref="PublishResult.Epoch"/> are the current ones.
    /// </summary>
    VersionMismatch,

    /// <summary>Of <see cref="ILaharsubStore.ReplaceStateAsync"/>: the topic exists but holds no state; nothing stored.</summary>
    NotAStateTopic,
}
