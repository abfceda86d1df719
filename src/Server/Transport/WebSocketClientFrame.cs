using System.Text.Json;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Transport;

/// <summary>
/// A client's frame, read with one pass of a <see cref="Utf8JsonReader"/>. A property of the wrong JSON type
/// is not fatal: <see cref="WrongType"/> names the first one, and the frame is refused with a problem; nor is
/// one whose text is not Unicode (<see cref="InvalidText"/>). A property name that is not Unicode text names no
/// field of the protocol, and is ignored as every unknown property is.
/// </summary>
internal readonly record struct WebSocketClientFrame(string Type, string? Id, string? Topics, long? TopicId, string? ContentType, string? Body,
    string? Encoding, string? IfEpoch, string? IdempotencyKey, string? WrongType, string? InvalidText)
{
    public static WebSocketClientFrame Parse(ReadOnlySpan<byte> json)
    {
        var reader = new Utf8JsonReader(json);
        if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
        {
            throw new JsonException("Not an object.");
        }
        string type = "", id = null!, topics = null!, contentType = null!, body = null!, ifEpoch = null!, encoding = null!, key = null!;
        var faults = new Faults();
        long? topicId = null;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            // A name that is not Unicode text is no field's: skipped, as unknown properties are.
            var name = UnicodeText.TryGetString(ref reader, out var text) ? text : null;
            reader.Read();
            switch (name)
            {
                case "type": type = Text(ref reader, name, ref faults) ?? ""; break;
                case "id": id = Text(ref reader, name, ref faults)!; break;
                case "topics": topics = Text(ref reader, name, ref faults)!; break;
                case "topicId": topicId = reader.TokenType == JsonTokenType.Number && reader.TryGetInt64(out var number) ? number : Skipped(ref reader); break;
                case "contentType": contentType = Text(ref reader, name, ref faults)!; break;
                // The message's text or base64: a number is not taken for its digits.
                case "body": body = Text(ref reader, name, ref faults, numberAllowed: false)!; break;
                case "encoding": encoding = Text(ref reader, name, ref faults)!; break;
                case "ifEpoch": ifEpoch = Text(ref reader, name, ref faults)!; break;
                case "idempotencyKey": key = Text(ref reader, name, ref faults)!; break;
                default: reader.Skip(); break;
            }
        }
        return new WebSocketClientFrame(type, id, topics, topicId, contentType, body, encoding, ifEpoch, key, faults.WrongType, faults.InvalidText);
    }

    /// <summary>A <c>topicId</c> that is no integer: skipped (an object or array whole), and refused as not positive.</summary>
    private static long Skipped(ref Utf8JsonReader reader)
    {
        reader.Skip();
        return -1;
    }

    /// <summary>
    /// A string (or a number, as its text, where <paramref name="numberAllowed"/>). Another JSON type is
    /// skipped and noted in <paramref name="faults"/>' wrong type, a string that is not Unicode text in its invalid text.
    /// </summary>
    private static string? Text(ref Utf8JsonReader reader, string name, ref Faults faults, bool numberAllowed = true)
    {
        switch (reader.TokenType)
        {
            case JsonTokenType.String:
                if (UnicodeText.TryGetString(ref reader, out var text))
                {
                    return text;
                }
                faults.InvalidText ??= name;
                return null;
            case JsonTokenType.Number when numberAllowed:
                return System.Text.Encoding.UTF8.GetString(reader.ValueSpan);
            case JsonTokenType.Null:
                return null;
            default:
                faults.WrongType ??= name;
                reader.Skip();
                return null;
        }
    }

    /// <summary>The first property of the wrong JSON type, and the first whose text is not Unicode.</summary>
    private struct Faults
    {
        public string? WrongType;
        public string? InvalidText;
    }
}
