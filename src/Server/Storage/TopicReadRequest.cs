namespace Laharsub.Server.Storage;

/// <summary>What <see cref="ILaharsubStore.ReadAsync"/> should read of one topic.</summary>
/// <param name="TopicId">The topic.</param>
/// <param name="FromMessageId">The first id wanted; older ids that are no longer retained are skipped (the caller sees the gap from the result).</param>
/// <param name="MaxMessages">Most messages to return; 0 reads only the topic's state.</param>
/// <param name="MaxBytes">Stop once the returned bodies reach this many bytes (the message that reaches it included).</param>
public readonly record struct TopicReadRequest(long TopicId, long FromMessageId, int MaxMessages, long MaxBytes);
