namespace Laharsub.Server.Storage;

/// <summary>
/// Where topics and messages live. The HTTP endpoints and in-process callers talk only to this
/// interface, so a distributed backend can replace the in-memory one without touching them.
/// Resolve it from dependency injection to create topics and publish from C# code.
/// </summary>
public interface ILaharsubBackend
{
    /// <summary>Creates a topic with an optional <paramref name="label"/> (kept as given); <see langword="null"/> when <c>MaxTopics</c> topics already exist.</summary>
    ValueTask<TopicInfo?> CreateTopicAsync(string? label = null, CancellationToken cancellationToken = default);

    /// <summary>The topic's current info, or <see langword="null"/> if it does not exist.</summary>
    ValueTask<TopicInfo?> GetTopicAsync(long topicId, CancellationToken cancellationToken = default);

    /// <summary>Up to <paramref name="limit"/> topics with ids greater than <paramref name="afterTopicId"/>, in id order.</summary>
    ValueTask<IReadOnlyList<TopicInfo>> ListTopicsAsync(long afterTopicId, int limit, CancellationToken cancellationToken = default);

    /// <summary>Deletes a topic and wakes its waiting polls; <see langword="false"/> if it did not exist.</summary>
    ValueTask<bool> DeleteTopicAsync(long topicId, CancellationToken cancellationToken = default);

    /// <summary>Publishes one message; the body is copied, so the caller may reuse its buffer.</summary>
    ValueTask<PublishResult> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, CancellationToken cancellationToken = default);

    /// <summary>
    /// Returns what the subscriptions can read now; if nothing, waits until a message or notice arrives
    /// on any of them or <paramref name="cancellationToken"/> fires (then the result is empty).
    /// </summary>
    ValueTask<PollResult> PollAsync(IReadOnlyList<Subscription> subscriptions, CancellationToken cancellationToken);

    /// <summary>Body bytes retained by the whole backend, for health checks and metrics.</summary>
    long RetainedBytes { get; }

    /// <summary>Topics that exist, for metrics.</summary>
    int TopicCount { get; }
}
