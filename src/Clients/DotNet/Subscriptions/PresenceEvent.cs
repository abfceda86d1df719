using System.Diagnostics.CodeAnalysis;
using System.Text.Json;

namespace Laharsub.Client;

/// <summary>What a <see cref="PresenceEvent"/> reports.</summary>
public enum PresenceEventType
{
    /// <summary>The member became present on the topic.</summary>
    Join,

    /// <summary>The member's lease expired: no poll or stream of it renewed it within the grace period.</summary>
    Leave,
}

/// <summary>
/// A join or leave on a topic with presence, read from a message of its companion topic
/// (<see cref="CreatedTopic.PresenceTopicId"/>) with <see cref="TryParse"/>. The member list
/// (<see cref="LaharsubClient.GetPresenceAsync"/>) is authoritative: read it first, then apply events, and read
/// it again after a <see cref="GapNotice"/> or <see cref="ResetNotice"/> on the companion topic.
/// </summary>
/// <param name="Type">Join or leave.</param>
/// <param name="Member">The member's identity.</param>
/// <param name="Data">Its member data (a JSON object), or <see langword="null"/>.</param>
/// <param name="Occupancy">The topic's number of members right after this change; events of different members made on different instances may arrive with these out of step.</param>
public sealed record PresenceEvent(PresenceEventType Type, string Member, JsonElement? Data, int Occupancy)
{
    /// <summary>
    /// Reads a presence event from a message of a companion topic: a JSON object with <c>type</c>
    /// (<c>join</c> or <c>leave</c>), <c>member</c>, <c>data</c> and <c>occupancy</c>.
    /// </summary>
    /// <param name="message">A message delivered by a subscription.</param>
    /// <param name="presenceEvent">The event, when the message is one.</param>
    /// <returns>Whether the message is a presence event; false for any other message, so that a subscription to several topics can try each.</returns>
    public static bool TryParse(LaharsubMessage message, [NotNullWhen(true)] out PresenceEvent? presenceEvent)
    {
        ArgumentNullException.ThrowIfNull(message);
        presenceEvent = null;
        try
        {
            using var document = JsonDocument.Parse(message.Body);
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object
                || !root.TryGetProperty("type", out var type) || type.ValueKind != JsonValueKind.String
                || !root.TryGetProperty("member", out var member) || member.ValueKind != JsonValueKind.String
                || !root.TryGetProperty("occupancy", out var occupancy) || !occupancy.TryGetInt32(out var count) || count < 0)
            {
                return false;
            }
            PresenceEventType? kind = type.GetString() switch
            {
                "join" => PresenceEventType.Join,
                "leave" => PresenceEventType.Leave,
                _ => null,
            };
            if (kind is null)
            {
                return false;
            }
            // Cloned so that the data outlives the document this method disposes.
            JsonElement? data = root.TryGetProperty("data", out var value) && value.ValueKind == JsonValueKind.Object ? value.Clone() : null;
            presenceEvent = new PresenceEvent(kind.Value, member.GetString()!, data, count);
            return true;
        }
        catch (JsonException)
        {
            return false;
        }
    }
}
