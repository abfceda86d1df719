using System.Text.Json;

namespace Laharsub.Client.Wire;

/// <summary>Reads a notice object, which is the same JSON in both formats.</summary>
internal static class Notices
{
    /// <summary>
    /// Reads the notice whose <c>StartObject</c> is the reader's current token (the whole object must be
    /// in the reader's data); <see langword="null"/> for a notice type this client does not know.
    /// </summary>
    public static SubscriptionEvent? Read(ref Utf8JsonReader reader)
    {
        string? type = null, epoch = null, requestedEpoch = null;
        var epochChanged = false;
        long topicId = 0, from = 0, to = 0, requestedFrom = 0, first = 0, last = 0, version = -1;
        JsonElement? document = null;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("type"u8))
            {
                reader.Read();
                type = reader.GetString();
            }
            else if (reader.ValueTextEquals("topicId"u8)) topicId = ReadInt64(ref reader);
            else if (reader.ValueTextEquals("epoch"u8)) epoch = ReadEpoch(ref reader);
            else if (reader.ValueTextEquals("requestedEpoch"u8)) requestedEpoch = ReadEpoch(ref reader);
            else if (reader.ValueTextEquals("reason"u8))
            {
                reader.Read();
                epochChanged = reader.ValueTextEquals("epochChanged"u8);
            }
            else if (reader.ValueTextEquals("fromMessageId"u8)) from = ReadInt64(ref reader);
            else if (reader.ValueTextEquals("toMessageId"u8)) to = ReadInt64(ref reader);
            else if (reader.ValueTextEquals("requestedFrom"u8)) requestedFrom = ReadInt64(ref reader);
            else if (reader.ValueTextEquals("firstMessageId"u8)) first = ReadInt64(ref reader);
            else if (reader.ValueTextEquals("lastMessageId"u8)) last = ReadInt64(ref reader);
            else if (reader.ValueTextEquals("version"u8)) version = ReadInt64(ref reader);
            else if (reader.ValueTextEquals("document"u8))
            {
                reader.Read();
                document = JsonElement.ParseValue(ref reader);
            }
            else
            {
                // Fields this client does not know (added by newer servers) are skipped; the object is
                // already known to be complete, so TrySkip cannot fail for want of data.
                reader.Read();
                if (!reader.TrySkip())
                {
                    throw new InvalidDataException("A field of the JSON poll response is cut short.");
                }
            }
        }
        if (topicId <= 0)
        {
            throw new InvalidDataException($"A '{type}' notice has no valid topicId.");
        }
        return type switch
        {
            "gap" when from > 0 && to >= from => new GapNotice(topicId, epoch, from, to),
            "conflated" when from > 0 && to >= from => new ConflatedNotice(topicId, epoch, from, to),
            "reset" when first > 0 => new ResetNotice(topicId, epoch, epochChanged, requestedFrom, requestedEpoch, first, last),
            "topicDeleted" => new TopicDeletedNotice(topicId, epoch),
            "state" when version >= 0 && document is { ValueKind: JsonValueKind.Object } state => new StateNotice(topicId, epoch, version, state),
            "state" => throw new InvalidDataException($"The 'state' notice of topic {topicId} lacks its version or its document (an object)."),
            "gap" or "conflated" or "reset" => throw new InvalidDataException($"The '{type}' notice of topic {topicId} lacks its message ids."),
            // A notice type from a newer server: it names no messages of ours, so passing over it loses nothing.
            _ => null,
        };
    }

    /// <summary>Reads a notice from a multipart part's body.</summary>
    public static SubscriptionEvent? Parse(ReadOnlySpan<byte> json)
    {
        try
        {
            var reader = new Utf8JsonReader(json);
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                throw new InvalidDataException("A notice part's body is not a JSON object.");
            }
            return Read(ref reader);
        }
        catch (Exception exception) when (IsMalformedJson(exception))
        {
            throw new InvalidDataException($"A notice part's body is malformed: {exception.Message}", exception);
        }
    }

    /// <summary>
    /// What Utf8JsonReader throws for data that is not what the protocol says: broken JSON, and also a
    /// value of the wrong type or format (a string where a number belongs, a bad date), which come as
    /// InvalidOperationException and FormatException. All of it means a malformed answer.
    /// </summary>
    internal static bool IsMalformedJson(Exception exception) =>
        exception is JsonException or FormatException or InvalidOperationException;

    /// <summary>Reads an epoch string (or null), refusing what is not one: epochs go into poll URLs.</summary>
    internal static string? ReadEpoch(ref Utf8JsonReader reader)
    {
        reader.Read();
        return reader.TokenType == JsonTokenType.Null ? null : Epochs.Received(reader.GetString());
    }

    internal static long ReadInt64(ref Utf8JsonReader reader)
    {
        reader.Read();
        return reader.GetInt64();
    }
}
