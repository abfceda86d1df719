using System.Buffers;
using System.Globalization;
using System.Security.Cryptography;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Unicode;
using System.Text;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Wire;

/// <summary>
/// Encodes messages into both wire forms, once per message and server instance (on first delivery,
/// cached on the message), and notices on demand. One instance per server: it owns the multipart
/// boundary, chosen at random at start. Another instance sharing the store encodes with its own.
/// </summary>
internal sealed class WireFormat
{
    private static readonly JsonWriterOptions JsonOptions = new()
    {
        // Message text goes out as written: escaping every non-ASCII character would bloat chat in
        // most languages, and escaping HTML-sensitive characters (<, >, &, ', +) made a '<' six bytes
        // ("\u003C"), six times the memory for a cached encoding of markup. The answers are
        // application/json (or SSE and WebSocket frames of it), parsed as JSON, never embedded in HTML by
        // the server; what JSON itself requires (quotes, backslashes, control characters) stays escaped.
        Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
        SkipValidation = true,
    };

    public WireFormat()
    {
        Boundary = "laharsub-" + Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));
        DelimiterBytes = Encoding.ASCII.GetBytes("--" + Boundary);
        CloseDelimiterBytes = Encoding.ASCII.GetBytes("--" + Boundary + "--\r\n");
        MultipartContentType = $"multipart/mixed; boundary=\"{Boundary}\"";
        JsonAnswerBytes = message => JsonElement(message).Length + 1;
        MultipartAnswerBytes = message => MultipartPart(message)?.Length ?? message.Body.Length + 256;
    }

    /// <summary>What a message adds to a JSON answer (its element and a comma): encoding it, once, to know.</summary>
    internal Func<Message, int> JsonAnswerBytes { get; }

    /// <summary>What a message adds to a multipart answer (its whole part).</summary>
    internal Func<Message, int> MultipartAnswerBytes { get; }

    /// <summary>The random multipart boundary of this server instance.</summary>
    public string Boundary { get; }

    /// <summary>The media type of every JSON answer the server writes itself (polls, publishes, health).</summary>
    public const string JsonContentType = "application/json; charset=utf-8";

    /// <summary><c>multipart/mixed</c> with this server's boundary.</summary>
    public string MultipartContentType { get; }

    internal byte[] DelimiterBytes { get; }
    internal byte[] CloseDelimiterBytes { get; }

    /// <summary>The message as one element of the JSON <c>messages</c> array, encoded on first use and then cached on the message (while its store's budget allows).</summary>
    internal static byte[] JsonElement(Message message)
    {
        // The polls that a publish wakes together may race to encode it: each encodes, the first result
        // is kept. A lock would make the others wait, and on a thread-pool thread waiting costs more than
        // a second encoding of a small message.
        if (message.JsonEncoding is { } json)
        {
            return json;
        }
        return Keep(ref message.JsonEncoding, EncodeJsonElement(message), message, RetainedCost.JsonEstimate(message.Body.Length, message.ContentType.Length));
    }

    /// <summary>
    /// Keeps the first of racing encodings on the message, charging what it costs beyond the estimate its
    /// store counted already; when that does not fit (the store or cache is full) the encoding serves the
    /// caller and is not kept, so retained memory stays within the limit whatever the escaping.
    /// </summary>
    private static byte[] Keep(ref byte[]? slot, byte[] encoded, Message message, long estimate)
    {
        if (Interlocked.CompareExchange(ref slot, encoded, null) is { } first)
        {
            return first;
        }
        if (!message.TryChargeEncoding(RetainedCost.Excess(encoded.Length, estimate)))
        {
            // Unkept again; a caller that took it meanwhile just uses it once.
            Interlocked.CompareExchange(ref slot, null, encoded);
        }
        return encoded;
    }

    /// <summary>
    /// The message's whole multipart part with this server's boundary (delimiter, headers, body, CRLF),
    /// encoded on first use and then cached on the message; null when the body contains the boundary,
    /// and the answer must be framed with another one (<see cref="EncodeMultipartPart"/>).
    /// </summary>
    internal byte[]? MultipartPart(Message message)
    {
        var part = message.MultipartEncoding;
        if (part is null)
        {
            // Racing encoders as for JSON; the first result is kept.
            var encoded = message.Body.Span.IndexOf(DelimiterBytes.AsSpan(2)) >= 0 ? BodyContainsBoundary : EncodeMultipartPart(message, Boundary, cached: true);
            part = Keep(ref message.MultipartEncoding, encoded, message, RetainedCost.MultipartEstimate(message.Body.Length, message.ContentType.Length));
        }
        return ReferenceEquals(part, BodyContainsBoundary) ? null : part;
    }

    /// <summary>Cached in place of a multipart part when the body contains this server's boundary.</summary>
    private static readonly byte[] BodyContainsBoundary = [];

    /// <summary>A multipart boundary for one answer whose bodies contain none of it: random, tried until it fits.</summary>
    internal static string BoundaryAvoiding(IReadOnlyList<Message> messages)
    {
        while (true)
        {
            var boundary = "laharsub-" + Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));
            var needle = Encoding.ASCII.GetBytes(boundary);
            var clear = true;
            for (var i = 0; i < messages.Count && clear; i++)
            {
                clear = messages[i].Body.Span.IndexOf(needle) < 0;
            }
            if (clear)
            {
                return boundary;
            }
        }
    }

    /// <summary>Encodes a message's multipart part with <paramref name="boundary"/>.</summary>
    internal static byte[] EncodeMultipartPart(Message message, string boundary, bool cached = false)
    {
        var contentType = message.ContentType;
        // Fixed text, the boundary, three numbers, the epoch, a timestamp and the content type (up to 3 UTF-8 bytes a char).
        var headerCapacity = 200 + boundary.Length + message.Epoch.Length + contentType.Length * 3;
        byte[]? rented = null;
        var header = headerCapacity <= 1024 ? stackalloc byte[1024] : (rented = ArrayPool<byte>.Shared.Rent(headerCapacity));
        try
        {
            if (!Utf8.TryWrite(header, CultureInfo.InvariantCulture,
                $"--{boundary}\r\nContent-Type: {contentType}\r\nLaharsub-Topic-Id: {message.TopicId}\r\nLaharsub-Epoch: {message.Epoch}\r\nLaharsub-Message-Id: {message.MessageId}\r\nLaharsub-Published-At: {message.PublishedAt.UtcDateTime:yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fff'Z'}\r\n\r\n",
                out var headerLength))
            {
                throw new InvalidOperationException("The multipart header outgrew its computed capacity.");
            }
            var body = message.Body.Span;
            var part = NewArray(headerLength + body.Length + 2, cached && message.IsRetained);
            header[..headerLength].CopyTo(part);
            body.CopyTo(part.AsSpan(headerLength));
            part[^2] = (byte)'\r';
            part[^1] = (byte)'\n';
            return part;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>An encoding's array: one cached on a message its store retains lives as long as the message does.</summary>
    private static byte[] NewArray(int length, bool retained) => retained ? RetainedArray.Allocate(length) : new byte[length];

    // One writer and buffer per thread, reused: encoding never awaits, so nothing else can use them meanwhile.
    [ThreadStatic] private static ArrayBufferWriter<byte>? t_jsonBuffer;
    [ThreadStatic] private static Utf8JsonWriter? t_jsonWriter;

    private static byte[] EncodeJsonElement(Message message)
    {
        var buffer = t_jsonBuffer ??= new ArrayBufferWriter<byte>(1024);
        buffer.ResetWrittenCount();
        var writer = t_jsonWriter ??= new Utf8JsonWriter(buffer, JsonOptions);
        writer.Reset(buffer);

        Span<byte> timestamp = stackalloc byte[32];
        message.PublishedAt.UtcDateTime.TryFormat(timestamp, out var timestampLength, TimestampFormat, CultureInfo.InvariantCulture);

        var body = message.Body.Span;
        writer.WriteStartObject();
        writer.WriteNumber("topicId"u8, message.TopicId);
        writer.WriteString("epoch"u8, message.Epoch);
        writer.WriteNumber("messageId"u8, message.MessageId);
        writer.WriteString("publishedAt"u8, timestamp[..timestampLength]);
        writer.WriteString("contentType"u8, message.ContentType);
        if (IsTextual(message.ContentType) && Utf8.IsValid(body))
        {
            writer.WriteString("encoding"u8, "text"u8);
            writer.WriteString("body"u8, body);
        }
        else
        {
            writer.WriteString("encoding"u8, "base64"u8);
            writer.WriteBase64String("body"u8, body);
        }
        writer.WriteEndObject();
        writer.Flush();
        var element = NewArray(buffer.WrittenCount, message.IsRetained);
        buffer.WrittenSpan.CopyTo(element);

        // Do not keep a large message's buffer alive on the thread after it.
        if (buffer.Capacity > 64 * 1024)
        {
            t_jsonBuffer = null;
            t_jsonWriter = null;
        }
        return element;
    }

    /// <summary>UTC, millisecond precision: the same text in both formats.</summary>
    private const string TimestampFormat = "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fff'Z'";

    /// <summary>Whether a content type names text, so that its body can travel in JSON as a string.</summary>
    internal static bool IsTextual(string contentType)
    {
        var mediaType = contentType.AsSpan();
        var semicolon = mediaType.IndexOf(';');
        if (semicolon >= 0)
        {
            mediaType = mediaType[..semicolon];
        }
        mediaType = mediaType.Trim();
        return mediaType.StartsWith("text/", StringComparison.OrdinalIgnoreCase)
            || mediaType.Equals("application/json", StringComparison.OrdinalIgnoreCase)
            || mediaType.EndsWith("+json", StringComparison.OrdinalIgnoreCase)
            || mediaType.Equals("application/xml", StringComparison.OrdinalIgnoreCase)
            || mediaType.EndsWith("+xml", StringComparison.OrdinalIgnoreCase)
            || mediaType.Equals("application/javascript", StringComparison.OrdinalIgnoreCase)
            || mediaType.Equals("application/x-www-form-urlencoded", StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>A notice as a JSON object (the same object in both formats).</summary>
    internal static byte[] EncodeNotice(in PollNotice notice)
    {
        var buffer = new ArrayBufferWriter<byte>(160);
        using (var writer = new Utf8JsonWriter(buffer, JsonOptions))
        {
            writer.WriteStartObject();
            writer.WriteString("type"u8, NoticeName(notice.Kind));
            writer.WriteNumber("topicId"u8, notice.TopicId);
            writer.WriteString("epoch"u8, notice.Epoch);
            switch (notice.Kind)
            {
                case PollNoticeKind.Gap or PollNoticeKind.Conflated:
                    writer.WriteNumber("fromMessageId"u8, notice.FromMessageId);
                    writer.WriteNumber("toMessageId"u8, notice.ToMessageId);
                    break;
                case PollNoticeKind.Reset or PollNoticeKind.EpochReset:
                    writer.WriteString("reason"u8, notice.Kind == PollNoticeKind.EpochReset ? "epochChanged"u8 : "beyondEnd"u8);
                    writer.WriteNumber("requestedFrom"u8, notice.FromMessageId);
                    if (notice.RequestedEpoch is not null)
                    {
                        writer.WriteString("requestedEpoch"u8, notice.RequestedEpoch);
                    }
                    writer.WriteNumber("firstMessageId"u8, notice.FirstMessageId);
                    writer.WriteNumber("lastMessageId"u8, notice.ToMessageId);
                    break;
                case PollNoticeKind.State:
                    writer.WriteNumber("version"u8, notice.ToMessageId);
                    writer.WritePropertyName("document"u8);
                    // The store's compact JSON (MergePatch made it), written as it is.
                    writer.WriteRawValue(notice.Document.Span, skipInputValidation: true);
                    break;
            }
            writer.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    internal static string NoticeName(PollNoticeKind kind) => kind switch
    {
        PollNoticeKind.Gap => "gap",
        PollNoticeKind.Reset or PollNoticeKind.EpochReset => "reset",
        PollNoticeKind.Conflated => "conflated",
        PollNoticeKind.State => "state",
        _ => "topicDeleted",
    };
}
