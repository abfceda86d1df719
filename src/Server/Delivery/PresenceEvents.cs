using System.Buffers;
using System.Text.Json;
using Laharsub.Server.Storage;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Delivery;

/// <summary>
/// Announces a presence change that this instance's store call made: a message on the topic's companion
/// topic (docs/protocol.md, "Events: the companion topic"), the metrics, and the webhook.
/// </summary>
internal sealed partial class PresenceEvents(ILaharsubStore store, PresenceWebhook webhook, PresenceMetrics metrics, ILogger<PresenceEvents> logger)
{
    public const string Join = "join", Leave = "leave", Occupied = "occupied", Vacated = "vacated";

    public ValueTask JoinedAsync(long topicId, PresenceRenewal renewal, PresenceIdentity identity)
    {
        metrics.Joined();
        webhook.Enqueue(Join, topicId, identity.Member, identity.Data, renewal.Occupancy);
        if (renewal.Occupancy == 1)
        {
            webhook.Enqueue(Occupied, topicId, identity.Member, identity.Data, renewal.Occupancy);
        }
        return PublishAsync(Join, renewal.PresenceTopicId, identity.Member, identity.Data, renewal.Occupancy);
    }

    public ValueTask LeftAsync(PresenceDeparture departure)
    {
        metrics.Left();
        webhook.Enqueue(Leave, departure.TopicId, departure.Member, departure.Data, departure.Occupancy);
        if (departure.Occupancy == 0)
        {
            webhook.Enqueue(Vacated, departure.TopicId, departure.Member, departure.Data, departure.Occupancy);
        }
        return PublishAsync(Leave, departure.PresenceTopicId, departure.Member, departure.Data, departure.Occupancy);
    }

    private async ValueTask PublishAsync(string type, long companionId, string member, string? data, int occupancy)
    {
        var body = Encode(type, member, data, occupancy, topicId: null, at: null);
        var result = await ((IPresenceStore)store).PublishEventAsync(companionId, body).ConfigureAwait(false);
        if (result.Status != PublishStatus.Published)
        {
            // The member list stays right; only subscribers of the companion miss this event.
            Log.EventNotPublished(logger, type, member, companionId, result.Status);
        }
    }

    /// <summary>An event's JSON: the companion topic's message, or with the topic and time, a webhook's body.</summary>
    internal static byte[] Encode(string type, string member, string? data, int occupancy, long? topicId, DateTimeOffset? at)
    {
        var buffer = new ArrayBufferWriter<byte>(128 + (data?.Length ?? 0));
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("type", type);
            if (topicId is { } id)
            {
                json.WriteNumber("topicId", id);
            }
            json.WriteString("member", member);
            json.WritePropertyName("data");
            if (data is null)
            {
                json.WriteNullValue();
            }
            else
            {
                json.WriteRawValue(data, skipInputValidation: true);
            }
            json.WriteNumber("occupancy", occupancy);
            if (at is { } time)
            {
                json.WriteString("at", time);
            }
            json.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }
}
