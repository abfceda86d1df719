using System.Buffers;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Unicode;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Wire;

/// <summary>
/// Encodes messages into both wire forms once, at publish time, and notices on demand.
/// One instance per server: it owns the multipart boundary, chosen at random at start.
/// </summary>
public sealed class WireFormat
{
    private static readonly JsonWriterOptions JsonOptions = new()
    {
        // Message text goes out as written: escaping every non-ASCII character would bloat chat in
        // most languages. HTML-sensitive characters stay escaped by this encoder.
        Encoder = JavaScriptEncoder.Create(UnicodeRanges.All),
        SkipValidation = true,
    };

    public WireFormat()
    {
        Boundary = "laharsub-" + Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));
        DelimiterBytes = Encoding.ASCII.GetBytes("--" + Boundary);
        CloseDelimiterBytes = Encoding.ASCII.GetBytes("--" + Boundary + "--\r\n");
        MultipartContentType = $"multipart/mixed; boundary=\"{Boundary}\"";
    }

    /// <summary>The random multipart boundary of this server instance.</summary>
    public string Boundary { get; }

    /// <summary><c>multipart/mixed</c> with this server's boundary.</summary>
    public string MultipartContentType { get; }

    internal byte[] DelimiterBytes { get; }
    internal byte[] CloseDelimiterBytes { get; }

    /// <summary>Whether a body would break the multipart framing (and so must be refused).</summary>
    public bool ContainsBoundary(ReadOnlySpan<byte> body) => body.IndexOf(DelimiterBytes.AsSpan(2)) >= 0;

    /// <summary>Builds a message and both of its wire forms.</summary>
    /// <remarks>Runs under the topic's lock for every publish, so it allocates only what the message keeps.</remarks>
    internal Message Encode(long topicId, long messageId, DateTimeOffset publishedAt, string contentType, ReadOnlySpan<byte> body)
    {
        // Fixed text, the boundary, three numbers, a timestamp and the content type (up to 3 UTF-8 bytes a char).
        var headerCapacity = 160 + Boundary.Length + contentType.Length * 3;
        byte[]? rented = null;
        var header = headerCapacity <= 1024 ? stackalloc byte[1024] : (rented = ArrayPool<byte>.Shared.Rent(headerCapacity));
        try
        {
            if (!Utf8.TryWrite(header, CultureInfo.InvariantCulture,
                $"--{Boundary}\r\nContent-Type: {contentType}\r\nLaharsub-Topic-Id: {topicId}\r\nLaharsub-Message-Id: {messageId}\r\nLaharsub-Published-At: {publishedAt.UtcDateTime:yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fff'Z'}\r\n\r\n",
                out var headerLength))
            {
                throw new InvalidOperationException("The multipart header outgrew its computed capacity.");
            }
            var part = new byte[headerLength + body.Length + 2];
            header[..headerLength].CopyTo(part);
            body.CopyTo(part.AsSpan(headerLength));
            part[^2] = (byte)'\r';
            part[^1] = (byte)'\n';

            return new Message(topicId, messageId, publishedAt, contentType, part, headerLength, body.Length,
                EncodeJsonElement(topicId, messageId, publishedAt, contentType, body));
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    // One writer and buffer per thread, reused: encoding never awaits, so nothing else can use them meanwhile.
    [ThreadStatic] private static ArrayBufferWriter<byte>? t_jsonBuffer;
    [ThreadStatic] private static Utf8JsonWriter? t_jsonWriter;

    private static byte[] EncodeJsonElement(long topicId, long messageId, DateTimeOffset publishedAt, string contentType, ReadOnlySpan<byte> body)
    {
        var buffer = t_jsonBuffer ??= new ArrayBufferWriter<byte>(1024);
        buffer.ResetWrittenCount();
        var writer = t_jsonWriter ??= new Utf8JsonWriter(buffer, JsonOptions);
        writer.Reset(buffer);

        Span<byte> timestamp = stackalloc byte[32];
        publishedAt.UtcDateTime.TryFormat(timestamp, out var timestampLength, TimestampFormat, CultureInfo.InvariantCulture);

        writer.WriteStartObject();
        writer.WriteNumber("topicId"u8, topicId);
        writer.WriteNumber("messageId"u8, messageId);
        writer.WriteString("publishedAt"u8, timestamp[..timestampLength]);
        writer.WriteString("contentType"u8, contentType);
        if (IsTextual(contentType) && Utf8.IsValid(body))
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
        var element = buffer.WrittenSpan.ToArray();

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
        var buffer = new ArrayBufferWriter<byte>(128);
        using (var writer = new Utf8JsonWriter(buffer, JsonOptions))
        {
            writer.WriteStartObject();
            switch (notice.Kind)
            {
                case PollNoticeKind.Gap:
                    writer.WriteString("type", NoticeName(notice.Kind));
                    writer.WriteNumber("topicId", notice.TopicId);
                    writer.WriteNumber("fromMessageId", notice.FromMessageId);
                    writer.WriteNumber("toMessageId", notice.ToMessageId);
                    break;
                case PollNoticeKind.Reset:
                    writer.WriteString("type", NoticeName(notice.Kind));
                    writer.WriteNumber("topicId", notice.TopicId);
                    writer.WriteNumber("requestedFrom", notice.FromMessageId);
                    writer.WriteNumber("firstMessageId", notice.FirstMessageId);
                    writer.WriteNumber("lastMessageId", notice.ToMessageId);
                    break;
                default:
                    writer.WriteString("type", NoticeName(notice.Kind));
                    writer.WriteNumber("topicId", notice.TopicId);
                    break;
            }
            writer.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    internal static string NoticeName(PollNoticeKind kind) => kind switch
    {
        PollNoticeKind.Gap => "gap",
        PollNoticeKind.Reset => "reset",
        _ => "topicDeleted",
    };
}
