namespace Laharsub.Server.Storage;

/// <summary>What <see cref="ILaharsubStore.ReadAsync"/> should read of one topic.</summary>
/// <param name="TopicId">The topic.</param>
/// <param name="FromMessageId">The first id wanted; older ids that are no longer retained are skipped (the caller sees the gap from the result).</param>
/// <param name="MaxMessages">Most messages to return; 0 reads only the topic's state.</param>
/// <param name="MaxBytes">Stop once the returned bodies reach this many bytes (the message that reaches it included).</param>
/// <param name="WithDocument">
/// On a state topic, read its document instead of messages: the result carries <see cref="TopicReadResult.Document"/>,
/// whose version is <see cref="TopicReadResult.LastMessageId"/> (read in the same step), and no messages (none follow
/// that version yet). On any other topic, ignored.
/// </param>
public readonly record struct TopicReadRequest(long TopicId, long FromMessageId, int MaxMessages, long MaxBytes, bool WithDocument = false);
