namespace Laharsub.Server.Storage;

/// <summary>One topic of a poll and the smallest message id the client still wants.</summary>
/// <param name="TopicId">The topic.</param>
/// <param name="From">The client's cursor; <see langword="null"/> starts with the next message published.</param>
public readonly record struct Subscription(long TopicId, long? From);
