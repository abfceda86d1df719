using System.Buffers;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

namespace Laharsub.Floor;

/// <summary>
/// The subscription as a WebSocket (subprotocol <c>laharsub.v1</c>): a <c>subscribed</c> frame, then a
/// <c>message</c> or <c>notice</c> frame each; <c>publish</c> frames from the client are stored and
/// answered <c>published</c> (or <c>problem</c>). One lock keeps the two writers' frames whole.
/// </summary>
internal static class SocketTransport
{
    public const string SubProtocol = "laharsub.v1";

    public static async Task RunAsync(HttpContext context, Subscription[] subscriptions, Topics topics, CancellationTokenSource ended)
    {
        using var socket = await context.WebSockets.AcceptWebSocketAsync(SubProtocol);
        using var sending = new SemaphoreSlim(1, 1);
        var receiving = ReceiveAsync(socket, topics, sending, ended);
        var frame = new ArrayBufferWriter<byte>();
        var entries = new List<Entry>();
        var published = new Task[subscriptions.Length];
        try
        {
            frame.Write(Subscription.Describe(subscriptions, """{"type":"subscribed","""));
            await SendAsync(socket, sending, frame, ended.Token);
            while (true)
            {
                entries.Clear();
                for (var i = 0; i < subscriptions.Length; i++)
                {
                    published[i] = subscriptions[i].Topic.Read(ref subscriptions[i].From, entries);
                }
                foreach (var entry in entries)
                {
                    frame.Write(entry.IsNotice ? """{"type":"notice","notice":"""u8 : """{"type":"message","message":"""u8);
                    frame.Write(entry.Json);
                    frame.Write("}"u8);
                    await SendAsync(socket, sending, frame, ended.Token);
                }
                if (entries.Count == 0)
                {
                    await (published.Length == 1 ? published[0] : Task.WhenAny(published)).WaitAsync(ended.Token);
                }
            }
        }
        catch (Exception exception) when (exception is OperationCanceledException or WebSocketException)
        {
            // The client closed or went, or the server is stopping.
        }
        await ended.CancelAsync();
        await receiving;
        await CloseAsync(socket, context.RequestAborted.IsCancellationRequested);
    }

    private static async Task ReceiveAsync(WebSocket socket, Topics topics, SemaphoreSlim sending, CancellationTokenSource ended)
    {
        var buffer = new byte[4096];
        var answer = new ArrayBufferWriter<byte>();
        try
        {
            while (true)
            {
                var filled = 0;
                ValueWebSocketReceiveResult received;
                do
                {
                    if (filled == buffer.Length)
                    {
                        Array.Resize(ref buffer, buffer.Length * 2);
                    }
                    received = await socket.ReceiveAsync(buffer.AsMemory(filled), ended.Token);
                    filled += received.Count;
                }
                while (!received.EndOfMessage);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    break;
                }
                Answer(buffer.AsMemory(0, filled), topics, answer);
                await SendAsync(socket, sending, answer, ended.Token);
            }
        }
        catch (Exception exception) when (exception is OperationCanceledException or WebSocketException)
        {
        }
        await ended.CancelAsync();
    }

    /// <summary>Publishes a <c>publish</c> frame and writes its answer; any other frame is answered with a problem.</summary>
    private static void Answer(ReadOnlyMemory<byte> frame, Topics topics, IBufferWriter<byte> answer)
    {
        using var json = new Utf8JsonWriter(answer);
        json.WriteStartObject();
        try
        {
            using var document = JsonDocument.Parse(frame);
            var root = document.RootElement;
            var id = root.TryGetProperty("id", out var given) ? given.GetString() : null;
            if (root.GetProperty("type").GetString() != "publish")
            {
                WriteProblem(json, id, StatusCodes.Status400BadRequest, "The floor takes only publish frames.");
            }
            else if (!topics.TryGet(root.GetProperty("topicId").GetInt64(), out var topic))
            {
                WriteProblem(json, id, StatusCodes.Status404NotFound, "The topic does not exist.");
            }
            else
            {
                var body = root.GetProperty("body");
                var bytes = root.TryGetProperty("encoding", out var encoding) && encoding.GetString() == "base64" ? body.GetBytesFromBase64() : Encoding.UTF8.GetBytes(body.GetString()!);
                var contentType = root.TryGetProperty("contentType", out var type) ? type.GetString()! : "application/octet-stream";
                json.WriteString("type", "published");
                json.WriteString("id", id);
                json.WriteNumber("topicId", topic.Id);
                json.WriteNumber("messageId", topic.Publish(bytes, contentType));
                json.WriteString("epoch", Topic.Epoch);
            }
        }
        catch (Exception exception) when (exception is JsonException or KeyNotFoundException or InvalidOperationException or FormatException)
        {
            WriteProblem(json, null, StatusCodes.Status400BadRequest, "Not a publish frame: " + exception.Message);
        }
        json.WriteEndObject();
    }

    private static void WriteProblem(Utf8JsonWriter json, string? id, int status, string detail)
    {
        json.WriteString("type", "problem");
        json.WriteString("id", id);
        json.WriteStartObject("problem");
        json.WriteNumber("status", status);
        json.WriteString("detail", detail);
        json.WriteEndObject();
    }

    /// <summary>Sends <paramref name="frame"/> as one text frame and clears it for the next.</summary>
    private static async Task SendAsync(WebSocket socket, SemaphoreSlim sending, ArrayBufferWriter<byte> frame, CancellationToken cancellationToken)
    {
        await sending.WaitAsync(cancellationToken);
        try
        {
            await socket.SendAsync(frame.WrittenMemory, WebSocketMessageType.Text, endOfMessage: true, cancellationToken);
        }
        finally
        {
            sending.Release();
            frame.Clear();
        }
    }

    /// <summary>Answers the client's close, or says the server is stopping (1001); a client that went needs nothing.</summary>
    private static async Task CloseAsync(WebSocket socket, bool clientGone)
    {
        if (clientGone || socket.State is not (WebSocketState.Open or WebSocketState.CloseReceived))
        {
            return;
        }
        var stopping = socket.State == WebSocketState.Open;
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            await socket.CloseOutputAsync(stopping ? WebSocketCloseStatus.EndpointUnavailable : WebSocketCloseStatus.NormalClosure,
                stopping ? "The server is stopping; reconnect and resume from your cursors." : null, timeout.Token);
        }
        catch (Exception exception) when (exception is OperationCanceledException or WebSocketException)
        {
        }
    }
}
