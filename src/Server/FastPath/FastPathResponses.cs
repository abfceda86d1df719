using Laharsub.Server.Transport;
using System.Buffers;
using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Delivery;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Cors.Infrastructure;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.FastPath;

/// <summary>
/// The fast path's answers as prepared bytes: status lines and header blocks written as Kestrel writes
/// them for the same answers on the normal path (same headers, same order), with the Date header
/// formatted once a second rather than per answer.
/// </summary>
internal sealed class FastPathResponses(TimeProvider clock, bool serverHeader)
{
    private static readonly byte[] Ok = "HTTP/1.1 200 OK\r\nContent-Length: "u8.ToArray();
    private static readonly byte[] Created = Encoding.ASCII.GetBytes(
        $"HTTP/1.1 {PublishAnswer.StatusCode} {ReasonPhrases.GetReasonPhrase(PublishAnswer.StatusCode)}\r\nContent-Length: ");
    private static readonly byte[] NoContent = "HTTP/1.1 204 No Content\r\n"u8.ToArray();
    private static readonly byte[] JsonType = Encoding.ASCII.GetBytes($"\r\nContent-Type: {WireFormat.JsonContentType}\r\n");
    private static readonly byte[] ProblemType = "\r\nContent-Type: application/problem+json\r\n"u8.ToArray();
    private static readonly byte[] DateName = "Date: "u8.ToArray();
    private static readonly byte[] ServerLine = "\r\nServer: Kestrel"u8.ToArray();
    private static readonly byte[] NoStore = "\r\nCache-Control: no-store"u8.ToArray();
    private static readonly byte[] CloseLine = "\r\nConnection: close"u8.ToArray();
    private static readonly byte[] ETagName = "\r\nETag: "u8.ToArray();
    private static readonly byte[] RetryAfterName = "\r\nRetry-After: "u8.ToArray();
    private static readonly byte[] HeadEnd = "\r\n\r\n"u8.ToArray();
    private static readonly byte[] EventStreamStart = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"u8.ToArray();
    private static readonly byte[] EventStreamHeaders = "\r\nCache-Control: no-store\r\nTransfer-Encoding: chunked\r\nX-Accel-Buffering: no\r\n\r\n"u8.ToArray();
    private static readonly byte[] NoBuffering = "\r\nX-Accel-Buffering: no"u8.ToArray();
    private static readonly byte[] SwitchingProtocols = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"u8.ToArray();
    private static readonly byte[] WebSocketAccept = "\r\nCache-Control: no-store\r\nUpgrade: websocket\r\nSec-WebSocket-Accept: "u8.ToArray();
    private static readonly byte[] WebSocketProtocolName = "\r\nSec-WebSocket-Protocol: "u8.ToArray();

    /// <summary>
    /// The headers Laharsub's CORS policy adds, when it allows any origin, to an answer to a request that carries
    /// <c>Origin</c>, as ASP.NET Core's CORS service adds them in the pipeline; each answer writes what it is given as
    /// <c>cors</c> (empty for a request without <c>Origin</c>).
    /// </summary>
    public static byte[] AnyOriginHeaders(IServiceProvider services) => CrossOrigin.AnswerHeaderLines(services.GetRequiredService<ICorsService>(),
        services.GetRequiredService<IOptions<CorsOptions>>().Value.GetPolicy(CrossOrigin.PolicyName)
            ?? throw new InvalidOperationException($"The CORS policy '{CrossOrigin.PolicyName}' is missing: AddLaharsub() adds it."));

    private readonly byte[] _serverLine = serverHeader ? ServerLine : [];
    private DateLine? _date;

    /// <summary>A poll's <c>200</c> head for a JSON body of <paramref name="length"/> bytes; the body follows.</summary>
    public void WritePollOk(IBufferWriter<byte> writer, ReadOnlySpan<byte> cors, long length)
    {
        writer.Write(Ok);
        WriteNumber(writer, length);
        writer.Write(JsonType);
        WriteDate(writer);
        writer.Write(cors);
        writer.Write(NoStore);
        writer.Write(HeadEnd);
    }

    /// <summary>A poll's <c>204</c>; with <paramref name="close"/> it also says the connection closes (the server is stopping).</summary>
    public void WritePollNoContent(IBufferWriter<byte> writer, ReadOnlySpan<byte> cors, bool close)
    {
        writer.Write(NoContent);
        WriteDate(writer);
        writer.Write(cors);
        writer.Write(NoStore);
        if (close)
        {
            writer.Write(CloseLine);
        }
        writer.Write(HeadEnd);
    }

    /// <summary>An event stream's <c>200</c> head; the body follows in chunks.</summary>
    public void WriteEventStreamHead(IBufferWriter<byte> writer, ReadOnlySpan<byte> cors)
    {
        writer.Write(EventStreamStart);
        WriteDate(writer);
        writer.Write(cors);
        writer.Write(EventStreamHeaders);
    }

    /// <summary>
    /// A WebSocket's <c>101</c>, as the pipeline writes it: <paramref name="originHeaders"/> are the CORS headers
    /// of an upgrade that carried <c>Origin</c> (empty without one), and the subprotocol is named when chosen.
    /// </summary>
    public void WriteWebSocketAccept(IBufferWriter<byte> writer, ReadOnlySpan<byte> accept, string? subProtocol, ReadOnlySpan<byte> originHeaders)
    {
        writer.Write(SwitchingProtocols);
        WriteDate(writer);
        writer.Write(originHeaders);
        writer.Write(WebSocketAccept);
        writer.Write(accept);
        if (subProtocol is not null)
        {
            writer.Write(WebSocketProtocolName);
            WriteAscii(writer, subProtocol);
        }
        writer.Write(HeadEnd);
    }

    /// <summary>
    /// The problem of a poll or stream refused before it delivered anything, as the pipeline answers it
    /// (<see cref="Problems.Refused"/>): 404 for a topic that does not exist, 409 for one full of members. A
    /// stream's keeps the header that tells proxies not to buffer, set before the runner looked, and carries no
    /// trace id, as the pipeline's stream refusal carries none (FastPathTests compares them).
    /// </summary>
    public void WriteRefused(IBufferWriter<byte> writer, ReadOnlySpan<byte> cors, PollResult refused, int maxMembers, string? traceId, bool eventStream = false)
    {
        var problem = Problems.Refused(refused, maxMembers).ProblemDetails;
        WritePollProblem(writer, cors, problem.Status!.Value, problem.Title!, problem.Detail!, traceId, json =>
        {
            foreach (var (name, value) in problem.Extensions)
            {
                json.WriteNumber(name, Convert.ToInt64(value, System.Globalization.CultureInfo.InvariantCulture));
            }
        }, eventStream: eventStream);
    }

    /// <summary>A publish's <c>201</c>: the transport's answer (its JSON body, its ETag), in the pipeline's header order.</summary>
    public void WritePublished(IBufferWriter<byte> writer, ReadOnlySpan<byte> cors, in PublishAnswer answer, string contentType)
    {
        var json = answer.Json();
        writer.Write(Created);
        WriteNumber(writer, json.Length);
        writer.Write(JsonType);
        WriteDate(writer);
        writer.Write(cors);
        if (answer.EntityTag(contentType) is { } tag)
        {
            writer.Write(ETagName);
            WriteAscii(writer, tag);
        }
        writer.Write(HeadEnd);
        writer.Write(json);
    }

    /// <summary>
    /// A poll's problem answer (RFC 9457), as the pipeline's problem details service writes it: type, title,
    /// status, detail, the extensions, then the trace id.
    /// </summary>
    public void WritePollProblem(IBufferWriter<byte> writer, ReadOnlySpan<byte> cors, int status, string title, string detail,
        string? traceId, Action<Utf8JsonWriter> extensions, int? retryAfterSeconds = null, bool eventStream = false)
    {
        var body = new ArrayBufferWriter<byte>(256);
        using (var json = new Utf8JsonWriter(body))
        {
            json.WriteStartObject();
            json.WriteString("type", status switch
            {
                404 => "https://tools.ietf.org/html/rfc9110#section-15.5.5",
                409 => "https://tools.ietf.org/html/rfc9110#section-15.5.10",
                _ => "https://tools.ietf.org/html/rfc9110#section-15.6.4",
            });
            json.WriteString("title", title);
            json.WriteNumber("status", status);
            json.WriteString("detail", detail);
            extensions(json);
            if (traceId is not null)
            {
                json.WriteString("traceId", traceId);
            }
            json.WriteEndObject();
        }
        writer.Write(Encoding.ASCII.GetBytes($"HTTP/1.1 {status} {ReasonPhrases.GetReasonPhrase(status)}\r\nContent-Length: "));
        WriteNumber(writer, body.WrittenCount);
        writer.Write(ProblemType);
        WriteDate(writer);
        writer.Write(cors);
        writer.Write(NoStore);
        if (retryAfterSeconds is { } seconds)
        {
            writer.Write(RetryAfterName);
            WriteNumber(writer, seconds);
        }
        if (eventStream)
        {
            writer.Write(NoBuffering);
        }
        writer.Write(HeadEnd);
        writer.Write(body.WrittenSpan);
    }

    /// <summary><c>Date: ...\r\n</c>'s value and the Server line; the date is formatted at most once a second.</summary>
    private void WriteDate(IBufferWriter<byte> writer)
    {
        var now = clock.GetUtcNow();
        var second = now.ToUnixTimeSeconds();
        var date = Volatile.Read(ref _date);
        if (date is null || date.Second != second)
        {
            date = new DateLine(second, Encoding.ASCII.GetBytes(now.ToString("r")));
            Volatile.Write(ref _date, date);
        }
        writer.Write(DateName);
        writer.Write(date.Bytes);
        writer.Write(_serverLine);
    }

    private static void WriteNumber(IBufferWriter<byte> writer, long value)
    {
        var span = writer.GetSpan(20);
        Utf8Formatter.TryFormat(value, span, out var written);
        writer.Advance(written);
    }

    private static void WriteAscii(IBufferWriter<byte> writer, string text)
    {
        var span = writer.GetSpan(text.Length);
        var written = Encoding.ASCII.GetBytes(text, span);
        writer.Advance(written);
    }

    /// <summary>The Date header's value for one second; replaced whole so that readers never see a torn pair.</summary>
    private sealed record DateLine(long Second, byte[] Bytes);
}
