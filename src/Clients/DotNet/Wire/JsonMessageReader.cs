using System.Buffers.Text;
using System.Text.Json;

namespace Laharsub.Client.Wire;

/// <summary>
/// Reads a message object of the JSON format (<c>{"topicId":14,"epoch":"..","messageId":43,...}</c>),
/// as the JSON poll answer's <c>messages</c> array, a Server-Sent Events message's <c>data</c> and a
/// WebSocket <c>message</c> frame all carry it. Keeps the last content type and epoch, which consecutive
/// messages mostly share, so that they are not allocated again for every message.
/// </summary>
internal sealed class JsonMessageReader
{
    private string? _lastContentType;
    private string? _lastEpoch;

    /// <summary>Reads the message whose <c>StartObject</c> is the reader's current token (the whole object must be in the reader's data).</summary>
    /// <exception cref="InvalidDataException">A field is missing, or the body is not valid base64.</exception>
    public LaharsubMessage Read(ref Utf8JsonReader reader)
    {
        long topicId = 0, messageId = 0;
        DateTimeOffset publishedAt = default;
        string? contentType = null, epoch = null;
        var base64 = false;
        byte[]? body = null;
        var bodyLength = 0;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("topicId"u8)) topicId = Notices.ReadInt64(ref reader);
            else if (reader.ValueTextEquals("messageId"u8)) messageId = Notices.ReadInt64(ref reader);
            else if (reader.ValueTextEquals("publishedAt"u8))
            {
                reader.Read();
                publishedAt = reader.GetDateTimeOffset();
            }
            else if (reader.ValueTextEquals("contentType"u8))
            {
                reader.Read();
                // Consecutive messages mostly share a content type: reuse the string.
                if (_lastContentType is null || !reader.ValueTextEquals(_lastContentType))
                {
                    _lastContentType = reader.GetString();
                }
                contentType = _lastContentType;
            }
            else if (reader.ValueTextEquals("epoch"u8))
            {
                reader.Read();
                // Every message of a topic carries the same epoch: reuse the string.
                if (_lastEpoch is null || !reader.ValueTextEquals(_lastEpoch))
                {
                    _lastEpoch = Epochs.Received(reader.GetString());
                }
                epoch = _lastEpoch;
            }
            else if (reader.ValueTextEquals("encoding"u8))
            {
                reader.Read();
                base64 = reader.ValueTextEquals("base64"u8);
            }
            else if (reader.ValueTextEquals("body"u8))
            {
                reader.Read();
                // Unescaped UTF-8 is never longer than its escaped form.
                body = new byte[reader.ValueSpan.Length];
                bodyLength = reader.ValueIsEscaped ? reader.CopyString(body) : CopyRaw(reader.ValueSpan, body);
            }
            else
            {
                // Fields this client does not know (added by newer servers) are skipped; the object is
                // already known to be complete, so TrySkip cannot fail for want of data.
                reader.Read();
                if (!reader.TrySkip())
                {
                    throw new InvalidDataException("A field of a JSON message is cut short.");
                }
            }
        }
        if (topicId <= 0 || messageId <= 0 || contentType is null || body is null)
        {
            throw new InvalidDataException("A JSON message lacks its topicId, messageId, contentType or body.");
        }
        if (base64)
        {
            // Decoded in place: base64 is longer than what it encodes.
            if (Base64.DecodeFromUtf8InPlace(body.AsSpan(0, bodyLength), out bodyLength) != System.Buffers.OperationStatus.Done)
            {
                throw new InvalidDataException($"Message {topicId}/{messageId} has a body that is not valid base64.");
            }
        }
        return new LaharsubMessage(topicId, epoch, messageId, publishedAt, contentType, body.AsMemory(0, bodyLength));
    }

    private static int CopyRaw(ReadOnlySpan<byte> source, Span<byte> destination)
    {
        source.CopyTo(destination);
        return source.Length;
    }
}
