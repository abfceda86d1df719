namespace Laharsub.Server.Storage;

/// <summary>Something a subscriber must be told about a topic besides its messages.</summary>
/// <param name="Kind">Which notice.</param>
/// <param name="TopicId">The topic it is about.</param>
/// <param name="FromMessageId">Gap: first lost id. Reset: the cursor the client sent.</param>
/// <param name="ToMessageId">Gap: last lost id. Reset: the topic's last id.</param>
/// <param name="FirstMessageId">Reset: the id to continue from.</param>
public readonly record struct PollNotice(PollNoticeKind Kind, long TopicId, long FromMessageId = 0, long ToMessageId = 0, long FirstMessageId = 0);
