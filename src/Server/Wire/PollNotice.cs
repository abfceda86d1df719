namespace Laharsub.Server.Wire;

/// <summary>Something a subscriber must be told about a topic besides its messages.</summary>
/// <param name="Kind">Which notice.</param>
/// <param name="TopicId">The topic it is about.</param>
/// <param name="Epoch">The topic's incarnation: the current one, or for <see cref="PollNoticeKind.TopicDeleted"/> the deleted one.</param>
/// <param name="FromMessageId">Gap: first lost id. Conflated: first skipped id. Reset: the cursor the client sent (0 without one).</param>
/// <param name="ToMessageId">Gap: last lost id. Conflated: last skipped id. Reset: the topic's last id.</param>
/// <param name="FirstMessageId">Reset: the id to continue from.</param>
/// <param name="RequestedEpoch">Reset because the epoch changed: the epoch the client sent.</param>
/// <param name="Document">State: the document (compact JSON), whose version is <c>ToMessageId</c>.</param>
internal readonly record struct PollNotice(PollNoticeKind Kind, long TopicId, string Epoch, long FromMessageId = 0, long ToMessageId = 0,
    long FirstMessageId = 0, string? RequestedEpoch = null, ReadOnlyMemory<byte> Document = default)
{
    /// <summary>A state topic's document at <paramref name="version"/>: the subscriber continues from <c>version + 1</c>.</summary>
    public static PollNotice State(long topicId, string epoch, long version, ReadOnlyMemory<byte> document) =>
        new(PollNoticeKind.State, topicId, epoch, ToMessageId: version, Document: document);
}

/// <summary>The kinds of <see cref="PollNotice"/>.</summary>
internal enum PollNoticeKind
{
    /// <summary>Messages <c>FromMessageId..ToMessageId</c> are no longer retained.</summary>
    Gap,
    /// <summary>The cursor was beyond the topic's end; continue from <c>FirstMessageId</c>.</summary>
    Reset,
    /// <summary>The topic is another incarnation than the client's epoch; continue from <c>FirstMessageId</c>.</summary>
    EpochReset,
    /// <summary>The topic was deleted.</summary>
    TopicDeleted,
    /// <summary>Messages <c>FromMessageId..ToMessageId</c> were skipped because the subscriber asked for conflation.</summary>
    Conflated,
    /// <summary>A state topic's whole document at version <c>ToMessageId</c>; its messages continue after that version.</summary>
    State,
}
