using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;

namespace Laharsub.LoadTestClient.Load;

/// <summary>Which response format polls ask for (docs/protocol.md, "Formats").</summary>
internal enum WireFormatKind
{
    Json,
    Multipart,
}

/// <summary>Receives what a poll response holds, in the order the response holds it.</summary>
internal interface IPollResponseSink
{
    void OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body);

    void OnGap(long topicId, long fromMessageId, long toMessageId);

    /// <summary>A reset notice; <paramref name="epochChanged"/> when its reason is <c>epochChanged</c> (docs: topic epochs).</summary>
    void OnReset(long topicId, long firstMessageId, bool epochChanged);

    void OnTopicDeleted(long topicId);

    /// <summary>
    /// The epoch a gap or reset notice, or the first of a run of messages, names for its topic (UTF-8,
    /// checked to be one), reported before that notice or message; targets without epochs never report one.
    /// </summary>
    void OnEpoch(long topicId, ReadOnlySpan<byte> epoch)
    {
    }
}

/// <summary>
/// Reads a whole poll response body in either format without building objects for it: the load
/// generator reads thousands of these a second next to the server, on the same cores.
/// </summary>
internal static class PollResponseReader
{
    private static readonly byte[] CrLf = "\r\n"u8.ToArray();
    private static readonly byte[] HeaderEnd = "\r\n\r\n"u8.ToArray();

    /// <summary>Reads a JSON poll response; <paramref name="scratch"/> receives decoded message bodies.</summary>
    public static void ReadJson(ReadOnlySpan<byte> json, IPollResponseSink sink, ref byte[] scratch)
    {
        var reader = new Utf8JsonReader(json, new JsonReaderOptions { MaxDepth = 8 });
        long epochReportedFor = 0;
        Expect(reader.Read() && reader.TokenType == JsonTokenType.StartObject, "the response is not a JSON object");
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var isMessages = reader.ValueTextEquals("messages"u8);
            var isNotices = reader.ValueTextEquals("notices"u8);
            Expect(reader.Read(), "the response ends inside a property");
            if (!isMessages && !isNotices)
            {
                reader.Skip();
                continue;
            }
            Expect(reader.TokenType == JsonTokenType.StartArray, "'messages' and 'notices' must be arrays");
            while (reader.Read() && reader.TokenType == JsonTokenType.StartObject)
            {
                if (isMessages)
                {
                    ReadJsonMessage(ref reader, sink, ref scratch, ref epochReportedFor);
                }
                else
                {
                    ReadNotice(ref reader, sink);
                }
            }
        }
    }

    /// <summary>
    /// Reads one message object, as in the JSON format's <c>messages</c> (a Server-Sent Event's data);
    /// <paramref name="scratch"/> receives its decoded body.
    /// </summary>
    public static void ReadMessageObject(ReadOnlySpan<byte> json, IPollResponseSink sink, ref byte[] scratch)
    {
        var reader = new Utf8JsonReader(json, new JsonReaderOptions { MaxDepth = 8 });
        Expect(reader.Read() && reader.TokenType == JsonTokenType.StartObject, "a message is not a JSON object");
        ReadMessage(ref reader, sink, ref scratch);
    }

    /// <summary>Reads one notice object, as in the JSON format's <c>notices</c> (a Server-Sent Event's data).</summary>
    public static void ReadNoticeObject(ReadOnlySpan<byte> json, IPollResponseSink sink)
    {
        var reader = new Utf8JsonReader(json, new JsonReaderOptions { MaxDepth = 8 });
        Expect(reader.Read() && reader.TokenType == JsonTokenType.StartObject, "a notice is not a JSON object");
        ReadNotice(ref reader, sink);
    }

    /// <summary>Reads the message object at <paramref name="reader"/> (on its start), leaving the reader on its end.</summary>
    internal static void ReadMessage(ref Utf8JsonReader reader, IPollResponseSink sink, ref byte[] scratch)
    {
        // Each message on its own: its epoch is reported (and compared with the topic's) every time.
        long epochReportedFor = 0;
        ReadJsonMessage(ref reader, sink, ref scratch, ref epochReportedFor);
    }

    /// <summary>Reads a multipart/mixed poll response with the given boundary (RFC 2046 framing, docs/protocol.md).</summary>
    public static void ReadMultipart(ReadOnlySpan<byte> content, ReadOnlySpan<byte> boundary, IPollResponseSink sink)
    {
        Span<byte> delimiter = stackalloc byte[boundary.Length + 4];
        "\r\n--"u8.CopyTo(delimiter);
        boundary.CopyTo(delimiter[4..]);
        // The first delimiter has no CRLF before it.
        var dashBoundary = delimiter[2..];
        Expect(content.StartsWith(dashBoundary), "the multipart body does not start with its boundary");
        var rest = content[dashBoundary.Length..];
        long epochReportedFor = 0;
        while (true)
        {
            if (rest.StartsWith("--"u8))
            {
                return;
            }
            Expect(rest.StartsWith(CrLf), "a multipart delimiter is not followed by CRLF");
            rest = rest[2..];
            var headersEnd = rest.IndexOf(HeaderEnd);
            Expect(headersEnd >= 0, "a multipart part has no end of headers");
            var headers = rest[..(headersEnd + 2)];
            rest = rest[(headersEnd + 4)..];
            var bodyEnd = rest.IndexOf(delimiter);
            Expect(bodyEnd >= 0, "a multipart part has no closing delimiter");
            var body = rest[..bodyEnd];
            rest = rest[(bodyEnd + delimiter.Length)..];

            long topicId = 0, messageId = 0;
            var isNotice = false;
            ReadOnlySpan<byte> epoch = default;
            foreach (var line in headers.Split(CrLf))
            {
                var header = headers[line];
                if (TryHeaderValue(header, "Laharsub-Topic-Id"u8, out var value))
                {
                    topicId = ParseLong(value);
                }
                else if (TryHeaderValue(header, "Laharsub-Message-Id"u8, out value))
                {
                    messageId = ParseLong(value);
                }
                else if (TryHeaderValue(header, "Laharsub-Epoch"u8, out value))
                {
                    epoch = value;
                }
                else if (TryHeaderValue(header, "Laharsub-Notice"u8, out _))
                {
                    isNotice = true;
                }
            }
            if (isNotice)
            {
                var reader = new Utf8JsonReader(body);
                Expect(reader.Read() && reader.TokenType == JsonTokenType.StartObject, "a notice part is not a JSON object");
                ReadNotice(ref reader, sink);
            }
            else
            {
                Expect(topicId > 0 && messageId > 0, "a message part lacks Laharsub-Topic-Id or Laharsub-Message-Id");
                ReportEpoch(sink, topicId, epoch, ref epochReportedFor);
                sink.OnMessage(topicId, messageId, body);
            }
        }
    }

    /// <summary>The boundary parameter of a multipart Content-Type (ASCII), unquoted.</summary>
    public static ReadOnlySpan<byte> BoundaryOf(ReadOnlySpan<byte> contentType)
    {
        var parameter = "boundary="u8;
        var start = -1;
        for (var i = 0; i + parameter.Length <= contentType.Length && start < 0; i++)
        {
            start = Ascii.EqualsIgnoreCase(contentType.Slice(i, parameter.Length), parameter) ? i : -1;
        }
        Expect(start >= 0, "the multipart Content-Type has no boundary");
        var value = contentType[(start + parameter.Length)..];
        var end = value.IndexOf((byte)';');
        value = (end >= 0 ? value[..end] : value).Trim((byte)' ').Trim((byte)'"');
        Expect(value.Length > 0, "the multipart boundary is empty");
        return value;
    }

    private static void ReadJsonMessage(ref Utf8JsonReader reader, IPollResponseSink sink, ref byte[] scratch, ref long epochReportedFor)
    {
        long topicId = 0, messageId = 0;
        var base64 = false;
        var bodyLength = -1;
        ReadOnlySpan<byte> epoch = default;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("topicId"u8))
            {
                reader.Read();
                topicId = reader.GetInt64();
            }
            else if (reader.ValueTextEquals("epoch"u8))
            {
                reader.Read();
                ExpectPlainString(ref reader);
                epoch = reader.ValueSpan;
            }
            else if (reader.ValueTextEquals("messageId"u8))
            {
                reader.Read();
                messageId = reader.GetInt64();
            }
            else if (reader.ValueTextEquals("encoding"u8))
            {
                reader.Read();
                base64 = reader.ValueTextEquals("base64"u8);
            }
            else if (reader.ValueTextEquals("body"u8))
            {
                reader.Read();
                // The body's raw text is kept in scratch; whether it is base64 may only be known later
                // ("encoding" may follow "body"), so decoding waits for the end of the object.
                var length = reader.HasValueSequence ? (int)reader.ValueSequence.Length : reader.ValueSpan.Length;
                if (scratch.Length < length)
                {
                    scratch = new byte[Math.Max(length, scratch.Length * 2)];
                }
                bodyLength = reader.CopyString(scratch);
            }
            else
            {
                reader.Read();
                reader.Skip();
            }
        }
        Expect(topicId > 0 && messageId > 0 && bodyLength >= 0, "a JSON message lacks topicId, messageId or body");
        var body = scratch.AsSpan(0, bodyLength);
        if (base64)
        {
            var status = Base64.DecodeFromUtf8InPlace(body, out var written);
            Expect(status == OperationStatus.Done, "a base64 message body does not decode");
            body = body[..written];
        }
        ReportEpoch(sink, topicId, epoch, ref epochReportedFor);
        sink.OnMessage(topicId, messageId, body);
    }

    /// <summary>Reads the notice object at <paramref name="reader"/> (on its start), leaving the reader on its end.</summary>
    internal static void ReadNotice(ref Utf8JsonReader reader, IPollResponseSink sink)
    {
        long topicId = 0, from = 0, to = 0, first = 0;
        var type = 0;
        var epochChanged = false;
        ReadOnlySpan<byte> epoch = default;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("type"u8))
            {
                reader.Read();
                // A conflated range (asked for with --conflate) moves the cursor as a gap does, and is counted with them.
                type = reader.ValueTextEquals("gap"u8) || reader.ValueTextEquals("conflated"u8) ? 1
                    : reader.ValueTextEquals("reset"u8) ? 2 : reader.ValueTextEquals("topicDeleted"u8) ? 3 : 0;
                continue;
            }
            if (reader.ValueTextEquals("reason"u8))
            {
                reader.Read();
                epochChanged = reader.TokenType == JsonTokenType.String && reader.ValueTextEquals("epochChanged"u8);
                continue;
            }
            if (reader.ValueTextEquals("epoch"u8))
            {
                reader.Read();
                ExpectPlainString(ref reader);
                epoch = reader.ValueSpan;
                continue;
            }
            var name = reader.ValueTextEquals("topicId"u8) ? 1 : reader.ValueTextEquals("fromMessageId"u8) ? 2
                : reader.ValueTextEquals("toMessageId"u8) ? 3 : reader.ValueTextEquals("firstMessageId"u8) ? 4 : 0;
            reader.Read();
            if (name == 0)
            {
                reader.Skip();
                continue;
            }
            var value = reader.GetInt64();
            _ = name switch { 1 => topicId = value, 2 => from = value, 3 => to = value, _ => first = value };
        }
        // A deletion names the deleted incarnation's epoch, which nothing follows any more.
        if (type is 1 or 2)
        {
            long notReported = 0;
            ReportEpoch(sink, topicId, epoch, ref notReported);
        }
        switch (type)
        {
            case 1:
                sink.OnGap(topicId, from, to);
                break;
            case 2:
                sink.OnReset(topicId, first, epochChanged);
                break;
            case 3:
                sink.OnTopicDeleted(topicId);
                break;
            default:
                throw new FormatException("A notice has an unknown type.");
        }
    }

    /// <summary>An epoch is read as the JSON holds it: servers issue them without escapes, and they go back verbatim.</summary>
    private static void ExpectPlainString(ref Utf8JsonReader reader) =>
        Expect(reader.TokenType == JsonTokenType.String && !reader.HasValueSequence && !reader.ValueIsEscaped, "an epoch is not a plain JSON string");

    /// <summary>
    /// Reports an epoch that is one (1 to 32 of <c>[0-9A-Za-z_-]</c>, docs/protocol.md): it goes back into
    /// the next poll's query as it is, so anything else would break that request instead of this answer.
    /// Messages come grouped by topic and share their topic's epoch within an answer (only a reset
    /// notice, reported on its own, changes it), so a run of one topic's messages reports it once.
    /// </summary>
    private static void ReportEpoch(IPollResponseSink sink, long topicId, ReadOnlySpan<byte> epoch, ref long epochReportedFor)
    {
        if (epoch.IsEmpty || topicId == epochReportedFor)
        {
            return;
        }
        Expect(epoch.Length <= 32 && !epoch.ContainsAnyExcept(EpochCharacters), "an epoch is not 1 to 32 letters, digits, '-' or '_'");
        sink.OnEpoch(topicId, epoch);
        epochReportedFor = topicId;
    }

    private static readonly SearchValues<byte> EpochCharacters =
        SearchValues.Create("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"u8);

    private static bool TryHeaderValue(ReadOnlySpan<byte> line, ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        value = default;
        if (line.Length <= name.Length || line[name.Length] != (byte)':' || !Ascii.EqualsIgnoreCase(line[..name.Length], name))
        {
            return false;
        }
        value = line[(name.Length + 1)..].Trim((byte)' ');
        return true;
    }

    private static long ParseLong(ReadOnlySpan<byte> text)
    {
        Expect(Utf8Parser.TryParse(text, out long value, out var consumed) && consumed == text.Length, "a header does not hold a number");
        return value;
    }

    private static void Expect(bool condition, string what)
    {
        if (!condition)
        {
            throw new FormatException($"Unreadable poll response: {what}.");
        }
    }
}
