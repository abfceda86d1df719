using System.Buffers.Text;
using System.Globalization;
using System.Text;

namespace Laharsub.Client.Wire;

/// <summary>
/// Parses a <c>multipart/mixed</c> poll response (RFC 2046) as it arrives. A message part's body is
/// copied once, from the receive buffer into the message; the boundary is found with a vectorized search.
/// </summary>
internal sealed class MultipartPollReader : IPollReader
{
    private static ReadOnlySpan<byte> CrLf => "\r\n"u8;
    private static ReadOnlySpan<byte> HeadersEnd => "\r\n\r\n"u8;

    private readonly ReadBuffer _buffer;
    /// <summary><c>--boundary</c>: the first delimiter, at the very start of the body or of a line.</summary>
    private readonly byte[] _delimiter;
    /// <summary><c>CRLF--boundary</c>: ends each part's body (the CRLF belongs to the delimiter).</summary>
    private readonly byte[] _bodyEnd;
    private State _state;
    /// <summary>How far into <see cref="ReadBuffer.Data"/> the current body has been searched for the delimiter.</summary>
    private int _searched;
    private PartHeaders _headers;
    private byte[] _lastContentTypeBytes = [];
    private string _lastContentType = "";
    private byte[] _lastEpochBytes = [];
    private string? _lastEpoch;

    public MultipartPollReader(Stream stream, string boundary)
    {
        _buffer = new ReadBuffer(stream);
        _delimiter = Encoding.ASCII.GetBytes("--" + boundary);
        _bodyEnd = Encoding.ASCII.GetBytes("\r\n--" + boundary);
    }

    private enum State
    {
        Preamble,
        AfterDelimiter,
        Headers,
        Body,
        Done,
    }

    public async ValueTask<SubscriptionEvent?> ReadAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            if (TryRead(out var item))
            {
                return item;
            }
            if (_buffer.IsCompleted)
            {
                throw new InvalidDataException($"The multipart poll response ended in its {_state} before the closing delimiter.");
            }
            await _buffer.FillAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Parses the next part from what is buffered; <see langword="false"/> when more data is needed.</summary>
    private bool TryRead(out SubscriptionEvent? item)
    {
        item = null;
        while (true)
        {
            var data = _buffer.Data;
            switch (_state)
            {
                case State.Done:
                    return true;
                case State.Preamble:
                    var start = data.IndexOf(_delimiter);
                    if (start < 0)
                    {
                        // Keep a tail that could be the start of a delimiter split across reads.
                        _buffer.Consume(Math.Max(0, data.Length - _delimiter.Length + 1));
                        return false;
                    }
                    _buffer.Consume(start + _delimiter.Length);
                    _state = State.AfterDelimiter;
                    break;
                case State.AfterDelimiter:
                    if (data.Length < 2)
                    {
                        return false;
                    }
                    if (data.StartsWith("--"u8))
                    {
                        _state = State.Done;
                        break;
                    }
                    // RFC 2046 allows transport padding (spaces) between the delimiter and its CRLF.
                    var lineEnd = data.IndexOf(CrLf);
                    if (lineEnd < 0)
                    {
                        return false;
                    }
                    _buffer.Consume(lineEnd + CrLf.Length);
                    _headers = default;
                    _state = State.Headers;
                    break;
                case State.Headers:
                    if (data.Length < 2)
                    {
                        return false;
                    }
                    int headersLength;
                    if (data.StartsWith(CrLf))
                    {
                        headersLength = 0;
                    }
                    else
                    {
                        var end = data.IndexOf(HeadersEnd);
                        if (end < 0)
                        {
                            return false;
                        }
                        ParseHeaders(data[..end]);
                        headersLength = end + CrLf.Length;
                    }
                    _buffer.Consume(headersLength + CrLf.Length);
                    _searched = 0;
                    _state = State.Body;
                    break;
                case State.Body:
                    var found = data[_searched..].IndexOf(_bodyEnd);
                    if (found < 0)
                    {
                        _searched = Math.Max(0, data.Length - _bodyEnd.Length + 1);
                        return false;
                    }
                    var bodyLength = _searched + found;
                    item = CreateEvent(data[..bodyLength]);
                    // The body end includes the next delimiter: what follows is that delimiter's line.
                    _buffer.Consume(bodyLength + _bodyEnd.Length);
                    _state = State.AfterDelimiter;
                    if (item is not null)
                    {
                        return true;
                    }
                    break;
            }
        }
    }

    private SubscriptionEvent? CreateEvent(ReadOnlySpan<byte> body)
    {
        if (_headers.IsNotice)
        {
            return Notices.Parse(body);
        }
        if (_headers.TopicId <= 0 || _headers.MessageId <= 0)
        {
            throw new InvalidDataException("A message part of the multipart poll response lacks its Laharsub-Topic-Id or Laharsub-Message-Id header.");
        }
        return new LaharsubMessage(_headers.TopicId, _headers.Epoch, _headers.MessageId, _headers.PublishedAt,
            _headers.ContentType ?? "text/plain; charset=us-ascii", body.ToArray());
    }

    private void ParseHeaders(ReadOnlySpan<byte> headers)
    {
        while (!headers.IsEmpty)
        {
            var lineEnd = headers.IndexOf(CrLf);
            var line = lineEnd < 0 ? headers : headers[..lineEnd];
            headers = lineEnd < 0 ? default : headers[(lineEnd + CrLf.Length)..];
            var colon = line.IndexOf((byte)':');
            if (colon <= 0)
            {
                throw new InvalidDataException("A part of the multipart poll response has a header line without a name.");
            }
            var name = line[..colon];
            var value = line[(colon + 1)..].Trim(" \t"u8);
            if (Ascii.EqualsIgnoreCase(name, "Content-Type"u8))
            {
                _headers.ContentType = ContentTypeString(value);
            }
            else if (Ascii.EqualsIgnoreCase(name, "Laharsub-Topic-Id"u8))
            {
                _headers.TopicId = ParseId(value, "Laharsub-Topic-Id");
            }
            else if (Ascii.EqualsIgnoreCase(name, "Laharsub-Message-Id"u8))
            {
                _headers.MessageId = ParseId(value, "Laharsub-Message-Id");
            }
            else if (Ascii.EqualsIgnoreCase(name, "Laharsub-Published-At"u8))
            {
                _headers.PublishedAt = ParseTimestamp(value);
            }
            else if (Ascii.EqualsIgnoreCase(name, "Laharsub-Epoch"u8))
            {
                _headers.Epoch = EpochString(value);
            }
            else if (Ascii.EqualsIgnoreCase(name, "Laharsub-Notice"u8))
            {
                _headers.IsNotice = true;
            }
        }
    }

    /// <summary>The content type as a string, reusing the previous one when the bytes match (consecutive messages mostly share one).</summary>
    private string ContentTypeString(ReadOnlySpan<byte> value)
    {
        if (!value.SequenceEqual(_lastContentTypeBytes))
        {
            _lastContentTypeBytes = value.ToArray();
            // Latin-1 maps every byte to a char, so nothing the server sent is lost in decoding.
            _lastContentType = Encoding.Latin1.GetString(value);
        }
        return _lastContentType;
    }

    /// <summary>The epoch as a string, reusing the previous one when the bytes match (a topic's messages share one).</summary>
    private string EpochString(ReadOnlySpan<byte> value)
    {
        if (_lastEpoch is null || !value.SequenceEqual(_lastEpochBytes))
        {
            if (!Epochs.IsValid(value))
            {
                throw new InvalidDataException($"The Laharsub-Epoch header '{Encoding.Latin1.GetString(value)}' is not an epoch (1 to {Epochs.MaxLength} characters of 0-9, A-Z, a-z, '_' and '-').");
            }
            _lastEpochBytes = value.ToArray();
            _lastEpoch = Encoding.ASCII.GetString(value);
        }
        return _lastEpoch;
    }

    private static long ParseId(ReadOnlySpan<byte> value, string header) =>
        Utf8Parser.TryParse(value, out long id, out var consumed) && consumed == value.Length && id > 0
            ? id
            : throw new InvalidDataException($"The {header} header '{Encoding.Latin1.GetString(value)}' is not a positive integer.");

    private static DateTimeOffset ParseTimestamp(ReadOnlySpan<byte> value)
    {
        Span<char> text = stackalloc char[64];
        if (value.Length <= text.Length)
        {
            var length = Encoding.Latin1.GetChars(value, text);
            if (DateTimeOffset.TryParse(text[..length], CultureInfo.InvariantCulture,
                DateTimeStyles.AssumeUniversal | DateTimeStyles.AdjustToUniversal, out var timestamp))
            {
                return timestamp;
            }
        }
        throw new InvalidDataException($"The Laharsub-Published-At header '{Encoding.Latin1.GetString(value)}' is not a timestamp.");
    }

    public void Dispose() => _buffer.Dispose();

    private struct PartHeaders
    {
        public string? ContentType;
        public long TopicId;
        public long MessageId;
        public DateTimeOffset PublishedAt;
        public string? Epoch;
        public bool IsNotice;
    }
}
