namespace Laharsub.Server.Storage;

/// <summary>The outcome of <see cref="ILaharsubStore.PublishManyAsync"/>: all of its topics published, or none.</summary>
/// <param name="Status">
/// <see cref="PublishStatus.Published"/> when every topic got the message; otherwise why none did:
/// <see cref="PublishStatus.TopicNotFound"/> or <see cref="PublishStatus.EpochMismatch"/> (<see cref="Topics"/>
/// says which topics; a missing topic outranks a mismatched one), <see cref="PublishStatus.StorageFull"/>,
/// <see cref="PublishStatus.InvalidSize"/>, <see cref="PublishStatus.InvalidContentType"/>, or one of the
/// idempotency key statuses.
/// </param>
/// <param name="Topics">
/// One result per target, in the targets' order: when published (or replayed) each message's id and its topic's
/// epoch; when refused for its topics, each refusing topic's status (and current epoch on a mismatch), and
/// <see cref="PublishStatus.NotAttempted"/> for the others. Empty for the refusals of the whole publish.
/// </param>
/// <param name="Replayed">Whether the answer is the one recorded for the idempotency key, and nothing was published now.</param>
/// <param name="RetryAfter">On <see cref="PublishStatus.StorageFull"/> or <see cref="PublishStatus.TooManyIdempotencyKeys"/>, when room is expected, if known.</param>
public sealed record MultiPublishResult(PublishStatus Status, IReadOnlyList<PublishResult> Topics, bool Replayed = false, TimeSpan? RetryAfter = null);
