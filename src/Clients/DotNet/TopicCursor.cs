using System.Text.Json;
using System.Text.Json.Serialization;

namespace Laharsub.Client;

/// <summary>
/// Where a subscription stands in one topic: the smallest message id it still wants, and the epoch
/// (the incarnation of the topic) those ids belong to. Save it to resume later: with the epoch, a
/// topic that was re-created meanwhile (a server restart without persistence, a store that lost its
/// data) is reported as a <see cref="ResetNotice"/> with <see cref="ResetNotice.EpochChanged"/> instead
/// of its new messages being taken for the old ones.
/// </summary>
/// <remarks>
/// Serializes with System.Text.Json as <c>{"from":43,"epoch":"9f3c0a1b2c3d4e5f"}</c> and also reads a
/// bare number (a cursor saved before epochs existed) as a cursor without an epoch.
/// </remarks>
/// <param name="From">
/// The smallest message id wanted: 1 for everything retained; 0 on a state topic for the document first
/// (the <c>state</c> cursor, <see cref="ForState"/>), which becomes the document's version + 1 once it came.
/// </param>
/// <param name="Epoch">
/// The topic's epoch as the server reported it, an opaque token; <see langword="null"/> when not known
/// (a cursor from before epochs, or a server without them): the server then resets the cursor only
/// when it lies beyond the topic's end.
/// </param>
[JsonConverter(typeof(TopicCursorJsonConverter))]
public readonly record struct TopicCursor(long From, string? Epoch = null)
{
    /// <summary>
    /// The <c>state</c> cursor of a state topic: its document first (a <see cref="StateNotice"/>), then every
    /// change after it. It names no epoch: the document is the current incarnation's, and the notice says which.
    /// </summary>
    public static TopicCursor ForState { get; }

    /// <summary>Whether this is the <c>state</c> cursor (<see cref="From"/> 0).</summary>
    public bool IsState => From == 0;

    /// <summary>
    /// The cursor as the compact poll form writes it: <c>43~9f3c0a1b2c3d4e5f</c>, or <c>43</c> without an
    /// epoch, or <c>state</c>.
    /// </summary>
    public override string ToString() => IsState ? "state" : Epoch is null ? From.ToString(System.Globalization.CultureInfo.InvariantCulture) : $"{From}~{Epoch}";
}

/// <summary>Writes <c>{"from":..,"epoch":..}</c>; reads that or a bare number (a cursor saved before epochs).</summary>
internal sealed class TopicCursorJsonConverter : JsonConverter<TopicCursor>
{
    public override TopicCursor Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        if (reader.TokenType == JsonTokenType.Number)
        {
            return new TopicCursor(reader.GetInt64());
        }
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw new JsonException($"A topic cursor is an object like {{\"from\":43,\"epoch\":\"9f3c0a1b2c3d4e5f\"}} or a number, not {reader.TokenType}.");
        }
        long from = 0;
        string? epoch = null;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            // Case-insensitive, so that cursors written with other naming policies read back too.
            var name = reader.GetString();
            reader.Read();
            if (string.Equals(name, "from", StringComparison.OrdinalIgnoreCase))
            {
                from = reader.GetInt64();
            }
            else if (string.Equals(name, "epoch", StringComparison.OrdinalIgnoreCase))
            {
                epoch = reader.TokenType == JsonTokenType.Null ? null : reader.GetString();
            }
            else if (!reader.TrySkip())
            {
                // A converter sees its whole value, but not as the final block, where Skip would throw.
                throw new JsonException("A topic cursor's field is cut short.");
            }
        }
        return new TopicCursor(from, epoch);
    }

    public override void Write(Utf8JsonWriter writer, TopicCursor value, JsonSerializerOptions options)
    {
        writer.WriteStartObject();
        writer.WriteNumber("from", value.From);
        if (value.Epoch is not null)
        {
            writer.WriteString("epoch", value.Epoch);
        }
        writer.WriteEndObject();
    }
}
