using System.Buffers;
using System.Text;
using Laharsub.Server.Storage;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Wire;

/// <summary>
/// Writes a poll result from the messages' pre-encoded bytes straight into the response pipe,
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
            ? WriteJsonAsync(response, result, notices, cancellationToken)
            : WriteMultipartAsync(response, result, notices, wire, cancellationToken);
    }

    private static byte[][] EncodeNotices(IReadOnlyList<PollNotice> notices)
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

    private static async Task WriteJsonAsync(HttpResponse response, PollResult result, byte[][] notices, CancellationToken cancellationToken)
    {
        var messages = result.Messages;
        long length = JsonStart.Length + JsonMiddle.Length + JsonEnd.Length
            + Math.Max(0, notices.Length - 1) + Math.Max(0, messages.Count - 1);
        foreach (var notice in notices)
        {
            length += notice.Length;
        }
        for (var i = 0; i < messages.Count; i++)
        {
            length += messages[i].JsonElement.Length;
        }

        response.ContentType = "application/json; charset=utf-8";
        response.ContentLength = length;
        var writer = response.BodyWriter;
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
            writer.Write(messages[i].JsonElement);
        }
        writer.Write(JsonEnd);
        await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
    }

    private static async Task WriteMultipartAsync(HttpResponse response, PollResult result, byte[][] notices, WireFormat wire, CancellationToken cancellationToken)
    {
        var noticeHeaders = new byte[notices.Length][];
        long length = wire.CloseDelimiterBytes.Length;
        for (var i = 0; i < notices.Length; i++)
        {
            var notice = result.Notices[i];
            noticeHeaders[i] = Encoding.ASCII.GetBytes(WireFormat.NoticeName(notice.Kind) + "\r\nLaharsub-Topic-Id: " + notice.TopicId);
            length += wire.DelimiterBytes.Length + NoticeHeaderStart.Length + noticeHeaders[i].Length + HeaderEnd.Length + notices[i].Length + CrLf.Length;
        }
        var messages = result.Messages;
        for (var i = 0; i < messages.Count; i++)
        {
            length += messages[i].MultipartPart.Length;
        }

        response.ContentType = wire.MultipartContentType;
        response.ContentLength = length;
        var writer = response.BodyWriter;
        for (var i = 0; i < notices.Length; i++)
        {
            writer.Write(wire.DelimiterBytes);
            writer.Write(NoticeHeaderStart);
            writer.Write(noticeHeaders[i]);
            writer.Write(HeaderEnd);
            writer.Write(notices[i]);
            writer.Write(CrLf);
        }
        for (var i = 0; i < messages.Count; i++)
        {
            writer.Write(messages[i].MultipartPart.Span);
        }
        writer.Write(wire.CloseDelimiterBytes);
        await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
    }
}
