namespace Laharsub.Server.Storage;

/// <summary>The state of one topic as <see cref="ILaharsubStore.ReadAsync"/> found it, and how many messages it returned.</summary>
/// <param name="Exists">Whether the topic exists; when false the other values are meaningless.</param>
/// <param name="Epoch">The topic's incarnation.</param>
/// <param name="LastMessageId">The id of the last message published, 0 before the first.</param>
/// <param name="FirstRetainedMessageId">The oldest id still retained; <c>LastMessageId + 1</c> when none is.</param>
/// <param name="MessageCount">How many messages were appended to the list for this topic.</param>
/// <param name="State">Whether the topic holds state (<see cref="TopicInfo.State"/>).</param>
/// <param name="Document">
/// When <see cref="TopicReadRequest.WithDocument"/> asked for it on a state topic, the document's compact UTF-8
/// JSON at version <see cref="LastMessageId"/>; otherwise <see langword="null"/>.
/// </param>
public readonly record struct TopicReadResult(bool Exists, string Epoch, long LastMessageId, long FirstRetainedMessageId, int MessageCount,
    bool State = false, ReadOnlyMemory<byte>? Document = null)
{
    /// <summary>The result for a topic that does not exist.</summary>
    public static TopicReadResult Missing => new(false, "", 0, 0, 0);
}
