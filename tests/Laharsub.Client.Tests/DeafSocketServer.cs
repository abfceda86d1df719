using System.Net.WebSockets;
using System.Text;
using System.Threading.Channels;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Client.Tests;

/// <summary>
/// A WebSocket server (Kestrel on a loopback port) that speaks just enough <c>laharsub.v1</c> to start a
/// socket (<c>subscribed</c>), then reads the client's frames and never answers them: a server that has
/// stopped acting on frames while it keeps the connection open. Started with <c>readsFrames: false</c>, it
/// does not even read them, so a frame larger than the socket buffers cannot be sent whole.
/// </summary>
internal sealed class DeafSocketServer : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly bool _readsFrames;

    private DeafSocketServer(bool readsFrames)
    {
        _readsFrames = readsFrames;
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        _app = builder.Build();
        _app.UseWebSockets();
        _app.Run(HandleAsync);
    }

    public Uri ApiAddress { get; private set; } = null!;

    /// <summary>The query of each socket opened, in order.</summary>
    public Channel<string> Connections { get; } = Channel.CreateUnbounded<string>();

    /// <summary>Every frame the clients sent.</summary>
    public Channel<string> Frames { get; } = Channel.CreateUnbounded<string>();

    public static async Task<DeafSocketServer> StartAsync(bool readsFrames = true)
    {
        var server = new DeafSocketServer(readsFrames);
        using var timeout = new CancellationTokenSource(TestSupport.Timeout);
        await server._app.StartAsync(timeout.Token);
        var address = server._app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        server.ApiAddress = new Uri(address.TrimEnd('/') + "/ps/");
        return server;
    }

    private async Task HandleAsync(HttpContext context)
    {
        if (!context.WebSockets.IsWebSocketRequest)
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return;
        }
        using var socket = await context.WebSockets.AcceptWebSocketAsync("laharsub.v1");
        Connections.Writer.TryWrite(Uri.UnescapeDataString(context.Request.QueryString.Value ?? ""));
        await socket.SendAsync("""{"type":"subscribed","topics":[]}"""u8.ToArray(), WebSocketMessageType.Text, true, context.RequestAborted);
        var buffer = new byte[64 * 1024];
        try
        {
            if (!_readsFrames)
            {
                // Until the client goes or the server stops (without reads, a client's close goes unnoticed).
                using var either = CancellationTokenSource.CreateLinkedTokenSource(context.RequestAborted, _app.Lifetime.ApplicationStopping);
                await Task.Delay(Timeout.Infinite, either.Token);
            }
            while (true)
            {
                var received = await socket.ReceiveAsync(buffer, context.RequestAborted);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    return;
                }
                Frames.Writer.TryWrite(Encoding.UTF8.GetString(buffer, 0, received.Count));
            }
        }
        catch (Exception exception) when (exception is WebSocketException or OperationCanceledException)
        {
            // The client went away.
        }
    }

    public async ValueTask DisposeAsync()
    {
        using var timeout = new CancellationTokenSource(TestSupport.Timeout);
        await _app.StopAsync(timeout.Token);
        await _app.DisposeAsync();
    }
}
