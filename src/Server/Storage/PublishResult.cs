namespace Laharsub.Server.Storage;

/// <summary>The outcome of a publish: a status and, when published, the message id.</summary>
public readonly record struct PublishResult(PublishStatus Status, long MessageId = 0);
