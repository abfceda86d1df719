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
/// A forwarding HTTP proxy (Kestrel on a loopback port) in front of a Laharsub server, with the
/// limitations the client's transport fallback is for: it never passes a WebSocket upgrade (it answers
/// <c>400</c>, as a proxy without WebSocket support does), and, as told, refuses event streams
/// (<c>406</c>) or holds them (headers, then nothing, as a proxy that buffers the response does).
/// Everything else, long polls included, is forwarded, and responses stream through chunk by chunk.
/// </summary>
internal sealed class TransportProxy : IAsyncDisposable
{
    private static readonly HashSet<string> HopByHop = new(StringComparer.OrdinalIgnoreCase)
    {
        "Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Host", "Proxy-Connection", "TE", "Trailer",
    };

    private readonly WebApplication _app;
    private readonly HttpClient _forward = new(new SocketsHttpHandler { AllowAutoRedirect = false, UseCookies = false }) { Timeout = Timeout.InfiniteTimeSpan };
    private readonly Uri _target;
    private readonly EventStreams _eventStreams;
    private readonly TaskCompletionSource _held = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _refusedUpgrades;
    private int _refusedEventStreams;
    private int _forwarded;

    public enum EventStreams
    {
        Forward,
        Refuse,
        Hold,
    }

    private TransportProxy(Uri target, EventStreams eventStreams)
    {
        _target = target;
        _eventStreams = eventStreams;
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        _app = builder.Build();
        _app.Run(HandleAsync);
    }

    /// <summary>The proxied Laharsub API root.</summary>
    public Uri ApiAddress { get; private set; } = null!;

    public int RefusedUpgrades => Volatile.Read(ref _refusedUpgrades);

    public int RefusedEventStreams => Volatile.Read(ref _refusedEventStreams);

    /// <summary>Requests forwarded to the server.</summary>
    public int Forwarded => Volatile.Read(ref _forwarded);

    /// <summary>Completes once the proxy holds an event stream (its headers sent, nothing more).</summary>
    public Task Held => _held.Task;

    /// <param name="server">The server's root, e.g. <c>http://127.0.0.1:40123/</c>.</param>
    /// <param name="eventStreams">What the proxy does with requests for an event stream.</param>
    public static async Task<TransportProxy> StartAsync(Uri server, EventStreams eventStreams = EventStreams.Forward)
    {
        var proxy = new TransportProxy(server, eventStreams);
        using var timeout = new CancellationTokenSource(TestSupport.Timeout);
        await proxy._app.StartAsync(timeout.Token);
        var address = proxy._app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        proxy.ApiAddress = new Uri(address.TrimEnd('/') + "/ps/");
        return proxy;
    }

    private async Task HandleAsync(HttpContext context)
    {
        var request = context.Request;
        if (context.Features.Get<IHttpUpgradeFeature>() is { IsUpgradableRequest: true }
            || request.Headers.Upgrade.ToString().Contains("websocket", StringComparison.OrdinalIgnoreCase))
        {
            Interlocked.Increment(ref _refusedUpgrades);
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            await context.Response.WriteAsync("This proxy does not pass WebSocket upgrades.");
            return;
        }
        if (request.Headers.Accept.ToString().Contains("text/event-stream", StringComparison.OrdinalIgnoreCase))
        {
            switch (_eventStreams)
            {
                case EventStreams.Refuse:
                    Interlocked.Increment(ref _refusedEventStreams);
                    context.Response.StatusCode = StatusCodes.Status406NotAcceptable;
                    await context.Response.WriteAsync("This proxy does not pass event streams.");
                    return;
                case EventStreams.Hold:
                    context.Response.ContentType = "text/event-stream";
                    await context.Response.StartAsync();
                    await context.Response.Body.FlushAsync();
                    _held.TrySetResult();
                    // A buffering proxy: the events never come through.
                    await Task.Delay(Timeout.InfiniteTimeSpan, context.RequestAborted).ContinueWith(static _ => { }, TaskScheduler.Default);
                    return;
            }
        }
        Interlocked.Increment(ref _forwarded);
        using var forward = new HttpRequestMessage(new HttpMethod(request.Method), new Uri(_target, request.Path + request.QueryString));
        if (request.ContentLength > 0 || request.Headers.TransferEncoding.Count > 0)
        {
            forward.Content = new StreamContent(request.Body);
        }
        foreach (var (name, values) in request.Headers)
        {
            if (HopByHop.Contains(name))
            {
                continue;
            }
            if (!forward.Headers.TryAddWithoutValidation(name, (IEnumerable<string?>)values))
            {
                forward.Content?.Headers.TryAddWithoutValidation(name, (IEnumerable<string?>)values);
            }
        }
        try
        {
            using var response = await _forward.SendAsync(forward, HttpCompletionOption.ResponseHeadersRead, context.RequestAborted);
            context.Response.StatusCode = (int)response.StatusCode;
            foreach (var (name, values) in response.Headers.Concat(response.Content.Headers))
            {
                if (!HopByHop.Contains(name))
                {
                    context.Response.Headers[name] = values.ToArray();
                }
            }
            await using var body = await response.Content.ReadAsStreamAsync(context.RequestAborted);
            var buffer = new byte[16 * 1024];
            int read;
            while ((read = await body.ReadAsync(buffer, context.RequestAborted)) > 0)
            {
                await context.Response.Body.WriteAsync(buffer.AsMemory(0, read), context.RequestAborted);
                await context.Response.Body.FlushAsync(context.RequestAborted);
            }
        }
        catch (Exception exception) when (exception is OperationCanceledException or IOException or HttpRequestException)
        {
            // The client or the server went away: so does the exchange.
            context.Abort();
        }
    }

    public async ValueTask DisposeAsync()
    {
        using var timeout = new CancellationTokenSource(TestSupport.Timeout);
        await _app.StopAsync(timeout.Token);
        await _app.DisposeAsync();
        _forward.Dispose();
    }
}
