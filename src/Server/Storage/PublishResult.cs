namespace Laharsub.Server.Storage;

/// <summary>The outcome of a publish.</summary>
/// <param name="Status">What happened.</param>
/// <param name="MessageId">When published, the message's id (on a state topic, the document's new version); on <see cref="PublishStatus.VersionMismatch"/>, the topic's last message id (the current version).</param>
/// <param name="Epoch">When published or on <see cref="PublishStatus.EpochMismatch"/> or <see cref="PublishStatus.VersionMismatch"/>, the topic's current epoch.</param>
/// <param name="RetryAfter">On <see cref="PublishStatus.StorageFull"/>, when the oldest retained message expires and frees room, if known.</param>
public readonly record struct PublishResult(PublishStatus Status, long MessageId = 0, string? Epoch = null, TimeSpan? RetryAfter = null);
