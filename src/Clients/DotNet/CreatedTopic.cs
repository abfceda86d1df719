namespace Laharsub.Client;

/// <summary>A topic just created.</summary>
/// <param name="TopicId">The new topic's id.</param>
public sealed record CreatedTopic(long TopicId)
{
    /// <summary>
    /// The topic's epoch: an opaque token naming this incarnation of the topic id. Pass it to
    /// <see cref="LaharsubSubscription.Add(long, long, string?)"/> and <see cref="PublishOptions.ExpectedEpoch"/>
    /// to be told when the id comes to name another topic. <see langword="null"/> from a server without epochs.
    /// </summary>
    public string? Epoch { get; init; }

    /// <summary>The topic's label, given when it was created; <see langword="null"/> for a topic without one.</summary>
    public string? Label { get; init; }

    /// <summary>Whether the topic holds a JSON document (<see cref="LaharsubClient.CreateStateTopicAsync"/>), read with <see cref="LaharsubClient.GetStateAsync(long, CancellationToken)"/> and <see cref="LaharsubClient.SubscribeState{T}(long, System.Text.Json.Serialization.Metadata.JsonTypeInfo{T}, CancellationToken)"/>.</summary>
    public bool State { get; init; }

    /// <summary>Whether the topic was created with presence (<see cref="LaharsubClient.CreateTopicWithPresenceAsync"/>).</summary>
    public bool Presence { get; init; }

    /// <summary>
    /// The companion topic that carries this topic's join and leave events: subscribe to it and read them
    /// with <see cref="PresenceEvent.TryParse"/>. <see langword="null"/> without presence.
    /// </summary>
    public long? PresenceTopicId { get; init; }
}
