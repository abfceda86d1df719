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
    private readonly JsonMessageReader _messages = new();
    private JsonReaderState _state;
    private Section _section;

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
                        item = _section == Section.InNotices ? Notices.Read(ref reader) : _messages.Read(ref reader);
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

    private static void Expect(ref Utf8JsonReader reader, JsonTokenType expected)
    {
        if (reader.TokenType != expected)
        {
            throw new InvalidDataException($"The JSON poll response has {reader.TokenType} where {expected} was expected.");
        }
    }

    public void Dispose() => _buffer.Dispose();
}
