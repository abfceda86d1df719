namespace Laharsub.Client;

/// <summary>
/// Messages <see cref="FromMessageId"/> to <see cref="ToMessageId"/> (inclusive) of a topic were skipped
/// because this subscription asked for conflation (<see cref="LaharsubSubscription.ConflationInterval"/>
/// or <see cref="LaharsubSubscription.StartAtLatest"/>): unlike a <see cref="GapNotice"/>, nothing was
/// lost that was not chosen. The topic's latest message follows.
/// </summary>
public sealed class ConflatedNotice : SubscriptionEvent
{
    internal ConflatedNotice(long topicId, string? epoch, long fromMessageId, long toMessageId) : base(topicId, epoch)
    {
        FromMessageId = fromMessageId;
        ToMessageId = toMessageId;
    }

    /// <summary>The first message id skipped.</summary>
    public long FromMessageId { get; }

    /// <summary>The last message id skipped.</summary>
    public long ToMessageId { get; }

    /// <summary>How many messages were skipped.</summary>
    public long Count => ToMessageId - FromMessageId + 1;

    /// <inheritdoc/>
    public override string ToString() => $"Conflated in topic {TopicId}: messages {FromMessageId}..{ToMessageId} were skipped";
}
