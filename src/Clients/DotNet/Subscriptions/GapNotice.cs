namespace Laharsub.Client;

/// <summary>
/// Messages <see cref="FromMessageId"/> to <see cref="ToMessageId"/> (inclusive) of a topic expired or
/// were evicted before this subscription read them: they are lost to this reader. The subscription
/// continues after them.
/// </summary>
public sealed class GapNotice : SubscriptionEvent
{
    internal GapNotice(long topicId, string? epoch, long fromMessageId, long toMessageId) : base(topicId, epoch)
    {
        FromMessageId = fromMessageId;
        ToMessageId = toMessageId;
    }

    /// <summary>The first message id missed.</summary>
    public long FromMessageId { get; }

    /// <summary>The last message id missed.</summary>
    public long ToMessageId { get; }

    /// <summary>How many messages were missed.</summary>
    public long Count => ToMessageId - FromMessageId + 1;

    /// <inheritdoc/>
    public override string ToString() => $"Gap in topic {TopicId}: messages {FromMessageId}..{ToMessageId} were lost";
}
