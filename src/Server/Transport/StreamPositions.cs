using System.Text.Json;
using Laharsub.Server.Delivery;

namespace Laharsub.Server.Transport;

/// <summary>
/// A stream's positions as the <c>topics</c> array of an SSE <c>open</c> event or a WebSocket
/// <c>subscribed</c> frame: each topic's id, epoch and cursor (<c>from</c>).
/// </summary>
internal static class StreamPositions
{
    public static void Write(Utf8JsonWriter json, Subscription[] positions)
    {
        json.WriteStartArray("topics"u8);
        foreach (var position in positions)
        {
            json.WriteStartObject();
            json.WriteNumber("topicId"u8, position.TopicId);
            if (position.Epoch is { } epoch)
            {
                json.WriteString("epoch"u8, epoch);
            }
            if (position.From is { } from)
            {
                json.WriteNumber("from"u8, from);
            }
            json.WriteEndObject();
        }
        json.WriteEndArray();
    }
}
