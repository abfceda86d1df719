using System.Text.Json;

namespace Laharsub.Client;

/// <summary>
/// The whole document of a state topic at <see cref="Version"/>: sent first for a topic subscribed
/// with the <c>state</c> cursor (<see cref="LaharsubSubscription.AddState(long)"/>), and again instead of
/// a gap when the cursor fell behind retention, or after a <see cref="ResetNotice"/>. The topic's
/// messages that follow start at <c>Version + 1</c>: merge patches (<see cref="JsonMergePatch.MediaType"/>)
/// and whole documents (<c>application/json</c>), to apply in order.
/// </summary>
public sealed class StateNotice : SubscriptionEvent
{
    internal StateNotice(long topicId, string? epoch, long version, JsonElement document) : base(topicId, epoch)
    {
        Version = version;
        Document = document;
    }

    /// <summary>The id of the last message applied to the document (0 before the first).</summary>
    public long Version { get; }

    /// <summary>The document, a JSON object (immutable; <see cref="System.Text.Json.Nodes.JsonObject.Create(JsonElement, System.Text.Json.Nodes.JsonNodeOptions?)"/> gives an editable copy).</summary>
    public JsonElement Document { get; }

    /// <inheritdoc/>
    public override string ToString() => $"State of topic {TopicId} at version {Version}";
}
