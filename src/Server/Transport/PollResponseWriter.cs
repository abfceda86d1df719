using System.Buffers;
using System.Text;
using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Transport;

/// <summary>
/// Writes a poll result from the messages' cached encodings straight into the response pipe,
/// with a Content-Length computed up front (no chunking, one flush).
/// </summary>
internal static class PollResponseWriter
{
    private static readonly byte[] JsonStart = "{\"notices\":["u8.ToArray();
    private static readonly byte[] JsonMiddle = "],\"messages\":["u8.ToArray();
    private static readonly byte[] JsonEnd = "]}"u8.ToArray();
    private static readonly byte[] NoticeHeaderStart = "\r\nContent-Type: application/json\r\nLaharsub-Notice: "u8.ToArray();
    private static readonly byte[] HeaderEnd = "\r\n\r\n"u8.ToArray();
    private static readonly byte[] CrLf = "\r\n"u8.ToArray();

    public static Task WriteAsync(HttpResponse response, PollResult result, PollFormat format, WireFormat wire, CancellationToken cancellationToken)
    {
        var notices = EncodeNotices(result.Notices);
        return format == PollFormat.Json
            ? WriteJsonAsync(response, result, notices, wire, cancellationToken)
            : WriteMultipartAsync(response, result, notices, wire, cancellationToken);
    }

    /// <summary>The notices' JSON encodings, once per answer: <see cref="JsonLength"/> and <see cref="WriteJson"/> both need them.</summary>
    internal static byte[][] EncodeNotices(List<PollNotice> notices)
    {
        if (notices.Count == 0)
        {
            return [];
        }
        var encoded = new byte[notices.Count][];
        for (var i = 0; i < encoded.Length; i++)
        {
            encoded[i] = WireFormat.EncodeNotice(notices[i]);
        }
        return encoded;
    }

    /// <summary>The length of the JSON answer <see cref="WriteJson"/> writes.</summary>
    internal static long JsonLength(PollResult result, byte[][] notices)
    {
        var messages = result.Messages;
        long length = JsonStart.Length + JsonMiddle.Length + JsonEnd.Length
            + Math.Max(0, notices.Length - 1) + Math.Max(0, messages.Count - 1);
        foreach (var notice in notices)
        {
            length += notice.Length;
        }
        // Encodings are cached on the messages: asking twice (here and when writing) costs less than an array per answer.
        for (var i = 0; i < messages.Count; i++)
        {
            length += WireFormat.JsonElement(messages[i]).Length;
        }
        return length;
    }

    /// <summary>The JSON answer, from the messages' cached encodings, into <paramref name="writer"/> (not flushed).</summary>
    internal static void WriteJson(IBufferWriter<byte> writer, PollResult result, byte[][] notices)
    {
        var messages = result.Messages;
        writer.Write(JsonStart);
        for (var i = 0; i < notices.Length; i++)
        {
            if (i > 0) writer.Write(","u8);
            writer.Write(notices[i]);
        }
        writer.Write(JsonMiddle);
        for (var i = 0; i < messages.Count; i++)
        {
            if (i > 0) writer.Write(","u8);
            writer.Write(WireFormat.JsonElement(messages[i]));
        }
        writer.Write(JsonEnd);
    }

    private static async Task WriteJsonAsync(HttpResponse response, PollResult result, byte[][] notices, WireFormat wire, CancellationToken cancellationToken)
    {
        response.ContentType = WireFormat.JsonContentType;
        response.ContentLength = JsonLength(result, notices);
        WriteJson(response.BodyWriter, result, notices);
        await response.BodyWriter.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    private static async Task WriteMultipartAsync(HttpResponse response, PollResult result, byte[][] notices, WireFormat wire, CancellationToken cancellationToken)
    {
        var messages = result.Messages;
        var parts = new byte[messages.Count][];
        var boundary = wire.Boundary;
        for (var i = 0; i < messages.Count; i++)
        {
            if (wire.MultipartPart(messages[i]) is not { } part)
            {
                // A body contains this server's boundary (only ever on purpose): frame this one answer
                // with a boundary that none of its bodies contains, encoding its parts afresh.
                boundary = WireFormat.BoundaryAvoiding(messages);
                for (var j = 0; j < messages.Count; j++)
                {
                    parts[j] = WireFormat.EncodeMultipartPart(messages[j], boundary);
                }
                break;
            }
            parts[i] = part;
        }
        var ownBoundary = ReferenceEquals(boundary, wire.Boundary);
        var delimiter = ownBoundary ? wire.DelimiterBytes : Encoding.ASCII.GetBytes("--" + boundary);
        var closeDelimiter = ownBoundary ? wire.CloseDelimiterBytes : Encoding.ASCII.GetBytes("--" + boundary + "--\r\n");

        var noticeHeaders = new byte[notices.Length][];
        long length = closeDelimiter.Length;
        for (var i = 0; i < notices.Length; i++)
        {
            var notice = result.Notices[i];
            noticeHeaders[i] = Encoding.ASCII.GetBytes(WireFormat.NoticeName(notice.Kind) + "\r\nLaharsub-Topic-Id: " + notice.TopicId + "\r\nLaharsub-Epoch: " + notice.Epoch);
            length += delimiter.Length + NoticeHeaderStart.Length + noticeHeaders[i].Length + HeaderEnd.Length + notices[i].Length + CrLf.Length;
        }
        foreach (var part in parts)
        {
            length += part.Length;
        }

        response.ContentType = ownBoundary ? wire.MultipartContentType : $"multipart/mixed; boundary=\"{boundary}\"";
        response.ContentLength = length;
        var writer = response.BodyWriter;
        for (var i = 0; i < notices.Length; i++)
        {
            writer.Write(delimiter);
            writer.Write(NoticeHeaderStart);
            writer.Write(noticeHeaders[i]);
            writer.Write(HeaderEnd);
            writer.Write(notices[i]);
            writer.Write(CrLf);
        }
        foreach (var part in parts)
        {
            writer.Write(part);
        }
        writer.Write(closeDelimiter);
        await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
    }
}
