using Laharsub.Server.Storage;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Delivery;

/// <summary>What a poll delivers: notices first, then messages grouped by topic in id order.</summary>
internal sealed class PollResult
{
    private static readonly List<PollNotice> NoNotices = [];
    private static readonly List<Message> NoMessages = [];

    /// <summary>Nothing to deliver (the poll timed out or was cancelled).</summary>
    public static PollResult Empty { get; } = new(NoNotices, NoMessages, unknownTopicId: null);

    /// <summary>A null list means none: the shared empty list is used instead of allocating one.</summary>
    public PollResult(List<PollNotice>? notices, List<Message>? messages, long? unknownTopicId)
    {
        Notices = notices ?? NoNotices;
        Messages = messages ?? NoMessages;
        UnknownTopicId = unknownTopicId;
    }

    /// <summary>A poll that named a topic that does not exist: nothing was read or registered.</summary>
    public static PollResult TopicNotFound(long topicId) => new(NoNotices, NoMessages, topicId);

    /// <summary>A run whose identity a topic refused to add, having its maximum of members: nothing was read.</summary>
    public static PollResult PresenceFull(long topicId) => new(NoNotices, NoMessages, unknownTopicId: null) { PresenceFullTopicId = topicId };

    /// <summary>A run that asked for the state of a topic that holds none: nothing was delivered.</summary>
    public static PollResult NotAStateTopic(long topicId) => new(NoNotices, NoMessages, unknownTopicId: null) { NotAStateTopicId = topicId };

    public List<PollNotice> Notices { get; }
    public List<Message> Messages { get; }
    public long? UnknownTopicId { get; }

    /// <summary>The topic that refused the run's member for having <c>MaxMembersPerTopic</c> members already.</summary>
    public long? PresenceFullTopicId { get; private init; }

    /// <summary>The topic whose state the run asked for (the cursor <c>state</c>) although it holds none.</summary>
    public long? NotAStateTopicId { get; private init; }

    /// <summary>The topic the run was refused for, before it delivered anything (unknown, full of members, or without state).</summary>
    public long? RefusedTopicId => UnknownTopicId ?? PresenceFullTopicId ?? NotAStateTopicId;

    /// <summary>The outcome a refused poll or stream is counted with (<c>not_found</c>, <c>presence_full</c>, <c>not_state</c>); null when it was not refused.</summary>
    public string? RefusedOutcome => UnknownTopicId is not null ? "not_found" : PresenceFullTopicId is not null ? "presence_full"
        : NotAStateTopicId is not null ? "not_state" : null;
    public bool IsEmpty => Notices.Count == 0 && Messages.Count == 0;
}
