namespace Laharsub.Client;

/// <summary>A snapshot of one topic, as the server reported it.</summary>
/// <param name="TopicId">The topic's id.</param>
/// <param name="CreatedAt">When the topic was created.</param>
/// <param name="LastMessageId">The id of the last message published; 0 before the first.</param>
/// <param name="FirstRetainedMessageId">The oldest message id still retained; <c>LastMessageId + 1</c> when none is.</param>
/// <param name="RetainedMessages">How many messages the server retains for this topic.</param>
/// <param name="RetainedBytes">The body bytes of the retained messages.</param>
/// <param name="WaitingPolls">Long polls waiting on this topic when the snapshot was taken.</param>
public sealed record TopicInfo(
    long TopicId,
    DateTimeOffset CreatedAt,
    long LastMessageId,
    long FirstRetainedMessageId,
    int RetainedMessages,
    long RetainedBytes,
    int WaitingPolls)
{
    /// <summary>
    /// The topic's epoch: an opaque token that names this incarnation of the topic id, different after
    /// the topic is deleted and created again or the server loses its data. <see langword="null"/> from
    /// a server without epochs.
    /// </summary>
    public string? Epoch { get; init; }

    /// <summary>The topic's label, given when it was created; <see langword="null"/> for a topic without one.</summary>
    public string? Label { get; init; }

    /// <summary>Whether the topic holds a JSON document (<see cref="LaharsubClient.CreateStateTopicAsync"/>), read with <see cref="LaharsubClient.GetStateAsync(long, CancellationToken)"/> and <see cref="LaharsubClient.SubscribeState{T}(long, System.Text.Json.Serialization.Metadata.JsonTypeInfo{T}, CancellationToken)"/>.</summary>
    public bool State { get; init; }

    /// <summary>Whether the topic was created with presence (<see cref="LaharsubClient.CreateTopicWithPresenceAsync"/>).</summary>
    public bool Presence { get; init; }

    /// <summary>The companion topic that carries this topic's join and leave events (see <see cref="PresenceEvent"/>); <see langword="null"/> without presence.</summary>
    public long? PresenceTopicId { get; init; }

    /// <summary>On a companion topic: the topic whose presence events it carries; otherwise <see langword="null"/>.</summary>
    public long? PresenceOf { get; init; }
}
