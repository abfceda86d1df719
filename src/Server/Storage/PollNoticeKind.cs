namespace Laharsub.Server.Storage;

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
