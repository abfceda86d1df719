namespace Laharsub.Server.Storage;

/// <summary>A snapshot of one topic.</summary>
/// <param name="TopicId">The topic's id.</param>
/// <param name="Epoch">The topic's incarnation: fixed at creation, different for every re-creation of the id.</param>
/// <param name="CreatedAt">When it was created.</param>
/// <param name="LastMessageId">The id of the last message published, 0 before the first.</param>
/// <param name="FirstRetainedMessageId">The oldest id still retained; <c>LastMessageId + 1</c> when none is.</param>
/// <param name="RetainedMessages">How many messages are retained.</param>
/// <param name="RetainedBytes">The body bytes of the retained messages.</param>
/// <param name="Label">The label given at creation (a human name that access patterns such as <c>orders-*</c> match), or <see langword="null"/>.</param>
/// <param name="PresenceTopicId">For a topic created with presence (<see cref="IPresenceStore"/>), its companion topic, where presence events are published; otherwise <see langword="null"/>.</param>
/// <param name="PresenceOf">For a companion topic, the topic whose presence events it holds; otherwise <see langword="null"/>.</param>
/// <param name="State">
/// Whether the topic holds state: one JSON object, its document, which each message changes (a merge patch,
/// <see cref="MergePatch.MediaType"/>, or a whole document, <see cref="MergePatch.DocumentMediaType"/>), and whose
/// version is <see cref="LastMessageId"/>. Fixed at creation.
/// </param>
public sealed record TopicInfo(
    long TopicId,
    string Epoch,
    DateTimeOffset CreatedAt,
    long LastMessageId,
    long FirstRetainedMessageId,
    int RetainedMessages,
    long RetainedBytes,
    string? Label = null,
    long? PresenceTopicId = null,
    long? PresenceOf = null,
    bool State = false);
