namespace Laharsub.Server.Storage;

/// <summary>What a poll delivers: notices first, then messages grouped by topic in id order.</summary>
public sealed class PollResult
{
    private static readonly List<PollNotice> NoNotices = [];
    private static readonly List<Message> NoMessages = [];

    /// <summary>Nothing to deliver (the poll timed out or was cancelled).</summary>
    public static PollResult Empty { get; } = new(NoNotices, NoMessages, unknownTopicId: null);

    internal PollResult(List<PollNotice> notices, List<Message> messages, long? unknownTopicId)
    {
        Notices = notices;
        Messages = messages;
        UnknownTopicId = unknownTopicId;
    }

    /// <summary>A poll that named a topic that does not exist: nothing was read or registered.</summary>
    public static PollResult TopicNotFound(long topicId) => new(NoNotices, NoMessages, topicId);

    public IReadOnlyList<PollNotice> Notices { get; }
    public IReadOnlyList<Message> Messages { get; }
    public long? UnknownTopicId { get; }
    public bool IsEmpty => Notices.Count == 0 && Messages.Count == 0;
}

/// <summary>The kinds of <see cref="PollNotice"/>.</summary>
public enum PollNoticeKind
{
    /// <summary>Messages <c>FromMessageId..ToMessageId</c> are no longer retained.</summary>
    Gap,
    /// <summary>The cursor was beyond the topic's end; continue from <c>FirstMessageId</c>.</summary>
    Reset,
    /// <summary>The topic was deleted.</summary>
    TopicDeleted,
}

/// <summary>Something a subscriber must be told about a topic besides its messages.</summary>
/// <param name="Kind">Which notice.</param>
/// <param name="TopicId">The topic it is about.</param>
/// <param name="FromMessageId">Gap: first lost id. Reset: the cursor the client sent.</param>
/// <param name="ToMessageId">Gap: last lost id. Reset: the topic's last id.</param>
/// <param name="FirstMessageId">Reset: the id to continue from.</param>
public readonly record struct PollNotice(PollNoticeKind Kind, long TopicId, long FromMessageId = 0, long ToMessageId = 0, long FirstMessageId = 0);
