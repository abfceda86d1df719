using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

namespace Laharsub.Server.Tests.Support;

/// <summary>
/// A WebSocket client of the subscription URL (subprotocol <c>laharsub.v1</c>) on .NET's own
/// <see cref="ClientWebSocket"/>: JSON text frames both ways, every receive bounded.
/// </summary>
public sealed class LaharsubSocket : IAsyncDisposable
{
    public const string SubProtocol = "laharsub.v1";

    private LaharsubSocket(ClientWebSocket socket) => Socket = socket;

    public ClientWebSocket Socket { get; }

    /// <summary>The subscription URL as a ws:// address, with <paramref name="query"/> (without '?') when not empty.</summary>
    public static Uri Address(Uri apiAddress, string query)
    {
        var http = new Uri(apiAddress, "subscriptions" + (query.Length > 0 ? "?" + query : ""));
        return new UriBuilder(http) { Scheme = "ws" }.Uri;
    }

    /// <summary>Opens a socket; fails unless the server upgrades it.</summary>
    public static async Task<LaharsubSocket> ConnectAsync(Uri apiAddress, string query)
    {
        var socket = NewSocket();
        try
        {
            using var timeout = new CancellationTokenSource(WireClient.Bound);
            await socket.ConnectAsync(Address(apiAddress, query), timeout.Token);
            return new LaharsubSocket(socket);
        }
        catch (WebSocketException failure)
        {
            var status = socket.HttpStatusCode;
            socket.Dispose();
            throw new Xunit.Sdk.XunitException($"the upgrade was refused with {(int)status}: {failure.Message}");
        }
    }

    /// <summary>Tries to open a socket that the server must refuse before the upgrade; returns the status it answered.</summary>
    public static async Task<HttpStatusCode> RefusedAsync(Uri apiAddress, string query)
    {
        using var socket = NewSocket();
        using var timeout = new CancellationTokenSource(WireClient.Bound);
        await Assert.ThrowsAsync<WebSocketException>(() => socket.ConnectAsync(Address(apiAddress, query), timeout.Token));
        return socket.HttpStatusCode;
    }

    private static ClientWebSocket NewSocket()
    {
        var socket = new ClientWebSocket();
        socket.Options.AddSubProtocol(SubProtocol);
        socket.Options.CollectHttpResponseDetails = true;
        return socket;
    }

    public Task SendAsync(string json) => SendAsync(Encoding.UTF8.GetBytes(json), WebSocketMessageType.Text);

    public async Task SendAsync(byte[] bytes, WebSocketMessageType type)
    {
        using var timeout = new CancellationTokenSource(WireClient.Bound);
        await Socket.SendAsync(bytes, type, endOfMessage: true, timeout.Token);
    }

    /// <summary>The next frame, as JSON; fails if the server closes instead.</summary>
    public async Task<JsonElement> ReceiveAsync(TimeSpan? bound = null)
    {
        var (type, bytes) = await ReceiveFrameAsync(bound);
        if (type == WebSocketMessageType.Close)
        {
            throw new Xunit.Sdk.XunitException($"the server closed the socket ({Socket.CloseStatus} '{Socket.CloseStatusDescription}') instead of sending a frame");
        }
        Assert.True(type == WebSocketMessageType.Text, $"frames are text, this one was {type}");
        return JsonDocument.Parse(bytes).RootElement.Clone();
    }

    /// <summary>The next frame, which must be of <paramref name="type"/> (its <c>type</c> property).</summary>
    public async Task<JsonElement> ReceiveAsync(string type, TimeSpan? bound = null)
    {
        var frame = await ReceiveAsync(bound);
        Assert.True(frame.GetProperty("type").GetString() == type, $"expected a '{type}' frame, got {frame.GetRawText()}");
        return frame;
    }

    /// <summary>Reads until the server's close frame; returns its status, reason and the frames that came before it.</summary>
    public async Task<(WebSocketCloseStatus? Status, string? Reason, List<JsonElement> Before)> ReceiveCloseAsync(TimeSpan? bound = null)
    {
        var before = new List<JsonElement>();
        while (true)
        {
            var (type, bytes) = await ReceiveFrameAsync(bound);
            if (type == WebSocketMessageType.Close)
            {
                // Answered as a browser answers it, completing the close handshake.
                if (Socket.State == WebSocketState.CloseReceived)
                {
                    await Socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, CancellationToken.None).WaitAsync(WireClient.Bound);
                }
                return (Socket.CloseStatus, Socket.CloseStatusDescription, before);
            }
            before.Add(JsonDocument.Parse(bytes).RootElement.Clone());
        }
    }

    private async Task<(WebSocketMessageType Type, byte[] Bytes)> ReceiveFrameAsync(TimeSpan? bound)
    {
        using var timeout = new CancellationTokenSource(bound ?? WireClient.Bound);
        using var frame = new MemoryStream();
        var buffer = new byte[16 * 1024];
        while (true)
        {
            WebSocketReceiveResult received;
            try
            {
                received = await Socket.ReceiveAsync(buffer, timeout.Token);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested)
            {
                throw new TimeoutException($"No frame within {bound ?? WireClient.Bound}.");
            }
            frame.Write(buffer, 0, received.Count);
            if (received.MessageType == WebSocketMessageType.Close || received.EndOfMessage)
            {
                return (received.MessageType, frame.ToArray());
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Socket.State == WebSocketState.Open)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            try
            {
                await Socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, "test done", timeout.Token);
            }
            catch (Exception failure) when (failure is WebSocketException or OperationCanceledException)
            {
                // The server went first.
            }
        }
        Socket.Dispose();
    }
}
