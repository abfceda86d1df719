using System.Buffers.Text;
using System.Text.Json;

namespace Laharsub.Client.Wire;

/// <summary>
/// Parses an <c>application/json</c> poll response (<c>{"notices":[...],"messages":[...]}</c>) as it
/// arrives: each notice or message is parsed as soon as its whole object is buffered, and dropped
/// from the buffer once parsed.
/// </summary>
internal sealed class JsonPollReader(Stream stream) : IPollReader
{
    private readonly ReadBuffer _buffer = new(stream);
    private JsonReaderState _state;
    private Section _section;
    private string? _lastContentType;
    private string? _lastEpoch;

    private enum Section
    {
        BeforeRoot,
        InRoot,
        InNotices,
        InMessages,
        Done,
    }

    public async ValueTask<SubscriptionEvent?> ReadAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            SubscriptionEvent? item;
            bool complete;
            try
            {
                complete = TryRead(out item);
            }
            catch (Exception exception) when (Notices.IsMalformedJson(exception))
            {
                throw new InvalidDataException($"The JSON poll response is malformed: {exception.Message}", exception);
            }
            if (complete)
            {
                return item;
            }
            if (_buffer.IsCompleted)
            {
                throw new InvalidDataException("The JSON poll response ended before its closing brace.");
            }
            await _buffer.FillAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Parses the next item from what is buffered. <see langword="false"/> when more data is needed; then
    /// nothing past the last complete item was consumed, and the next call starts again from there.
    /// </summary>
    private bool TryRead(out SubscriptionEvent? item)
    {
        item = null;
        var reader = new Utf8JsonReader(_buffer.Data, _buffer.IsCompleted, _state);
        long committed = 0;
        var committedState = _state;
        try
        {
            while (true)
            {
                switch (_section)
                {
                    case Section.Done:
                        return true;
                    case Section.BeforeRoot:
                        if (!reader.Read())
                        {
                            return false;
                        }
                        Expect(ref reader, JsonTokenType.StartObject);
                        _section = Section.InRoot;
                        break;
                    case Section.InRoot:
                        if (!reader.Read())
                        {
                            return false;
                        }
                        if (reader.TokenType == JsonTokenType.EndObject)
                        {
                            _section = Section.Done;
                            break;
                        }
                        var section = reader.ValueTextEquals("notices"u8) ? Section.InNotices
                            : reader.ValueTextEquals("messages"u8) ? Section.InMessages
                            : Section.InRoot;
                        if (!reader.Read())
                        {
                            return false;
                        }
                        if (section == Section.InRoot)
                        {
                            // A property from a newer server.
                            if (!reader.TrySkip())
                            {
                                return false;
                            }
                            break;
                        }
                        Expect(ref reader, JsonTokenType.StartArray);
                        _section = section;
                        break;
                    default:
                        if (!reader.Read())
                        {
                            return false;
                        }
                        if (reader.TokenType == JsonTokenType.EndArray)
                        {
                            _section = Section.InRoot;
                            break;
                        }
                        Expect(ref reader, JsonTokenType.StartObject);
                        var probe = reader;
                        if (!probe.TrySkip())
                        {
                            return false;
                        }
                        item = _section == Section.InNotices ? Notices.Read(ref reader) : ReadMessage(ref reader);
                        if (item is not null)
                        {
                            committed = reader.BytesConsumed;
                            committedState = reader.CurrentState;
                            return true;
                        }
                        break;
                }
                // Every state change above is complete: remember it, so a refill resumes after it.
                committed = reader.BytesConsumed;
                committedState = reader.CurrentState;
            }
        }
        finally
        {
            _buffer.Consume((int)committed);
            _state = committedState;
        }
    }

    private LaharsubMessage ReadMessage(ref Utf8JsonReader reader)
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
                    throw new InvalidDataException("A field of the JSON poll response is cut short.");
                }
            }
        }
        if (topicId <= 0 || messageId <= 0 || contentType is null || body is null)
        {
            throw new InvalidDataException("A message in the JSON poll response lacks its topicId, messageId, contentType or body.");
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

    private static void Expect(ref Utf8JsonReader reader, JsonTokenType expected)
    {
        if (reader.TokenType != expected)
        {
            throw new InvalidDataException($"The JSON poll response has {reader.TokenType} where {expected} was expected.");
        }
    }

    public void Dispose() => _buffer.Dispose();
}
