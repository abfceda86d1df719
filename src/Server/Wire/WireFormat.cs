using System.Buffers;
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
    internal Message Encode(long topicId, long messageId, DateTimeOffset publishedAt, string contentType, ReadOnlySpan<byte> body)
    {
        var header = new StringBuilder(128 + contentType.Length)
            .Append("--").Append(Boundary).Append("\r\n")
            .Append("Content-Type: ").Append(contentType).Append("\r\n")
            .Append("Laharsub-Topic-Id: ").Append(topicId).Append("\r\n")
            .Append("Laharsub-Message-Id: ").Append(messageId).Append("\r\n")
            .Append("Laharsub-Published-At: ").Append(FormatTimestamp(publishedAt)).Append("\r\n\r\n")
            .ToString();
        var headerLength = Encoding.ASCII.GetByteCount(header);
        var part = new byte[headerLength + body.Length + 2];
        Encoding.ASCII.GetBytes(header, part);
        body.CopyTo(part.AsSpan(headerLength));
        part[^2] = (byte)'\r';
        part[^1] = (byte)'\n';

        return new Message(topicId, messageId, publishedAt, contentType, part, headerLength, body.Length,
            EncodeJsonElement(topicId, messageId, publishedAt, contentType, body));
    }

    private static byte[] EncodeJsonElement(long topicId, long messageId, DateTimeOffset publishedAt, string contentType, ReadOnlySpan<byte> body)
    {
        var buffer = new ArrayBufferWriter<byte>(160 + body.Length * 4 / 3);
        using (var writer = new Utf8JsonWriter(buffer, JsonOptions))
        {
            writer.WriteStartObject();
            writer.WriteNumber("topicId", topicId);
            writer.WriteNumber("messageId", messageId);
            writer.WriteString("publishedAt", FormatTimestamp(publishedAt));
            writer.WriteString("contentType", contentType);
            if (IsTextual(contentType) && Utf8.IsValid(body))
            {
                writer.WriteString("encoding", "text");
                writer.WriteString("body", body);
            }
            else
            {
                writer.WriteString("encoding", "base64");
                writer.WriteBase64String("body", body);
            }
            writer.WriteEndObject();
        }
        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>UTC, millisecond precision: the same text in both formats.</summary>
    private static string FormatTimestamp(DateTimeOffset timestamp) =>
        timestamp.UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", System.Globalization.CultureInfo.InvariantCulture);

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
                    writer.WriteString("type", "gap");
                    writer.WriteNumber("topicId", notice.TopicId);
                    writer.WriteNumber("fromMessageId", notice.FromMessageId);
                    writer.WriteNumber("toMessageId", notice.ToMessageId);
                    break;
                case PollNoticeKind.Reset:
                    writer.WriteString("type", "reset");
                    writer.WriteNumber("topicId", notice.TopicId);
                    writer.WriteNumber("requestedFrom", notice.FromMessageId);
                    writer.WriteNumber("firstMessageId", notice.FirstMessageId);
                    writer.WriteNumber("lastMessageId", notice.ToMessageId);
                    break;
                default:
                    writer.WriteString("type", "topicDeleted");
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
