using System.Net;
using System.Net.WebSockets;
using Laharsub.Server.Hosting;
using Laharsub.Server.Tests.Support;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// WebSockets over HTTP/2 (RFC 8441, an extended CONNECT) in an application that embeds Laharsub the
/// README's way, with nothing of the standalone host: MapLaharsub maps the CONNECT itself.
/// </summary>
public sealed class WebSocketOverHttp2Tests
{
    [Fact]
    public async Task AnEmbeddingAppAcceptsAWebSocketOverHttp2AndDeliversAMessage()
    {
        await using var app = await StartEmbeddingAppAsync(useWebSockets: true);
        var api = ApiAddress(app);
        using var client = Http2Client(api);
        var topic = await client.CreateTopicAsync();
        using var handler = new SocketsHttpHandler();
        using var invoker = new HttpMessageInvoker(handler);
        using var socket = Http2Socket();
        using var timeout = new CancellationTokenSource(WireClient.Bound);

        await socket.ConnectAsync(LaharsubSocket.Address(api, $"topics={topic}"), invoker, timeout.Token);
        var subscribed = await ReceiveJsonAsync(socket, timeout.Token);
        await client.PublishTextAsync(topic, "over h2");
        var delivered = await ReceiveJsonAsync(socket, timeout.Token);

        // 200, not HTTP/1.1's 101: the socket is a stream of an HTTP/2 connection.
        Assert.Equal(HttpStatusCode.OK, socket.HttpStatusCode);
        Assert.Equal(LaharsubSocket.SubProtocol, socket.SubProtocol);
        Assert.Equal("subscribed", subscribed.GetProperty("type").GetString());
        Assert.Equal("message", delivered.GetProperty("type").GetString());
        Assert.Equal("over h2", delivered.GetProperty("message").Text());
    }

    [Theory]
    [InlineData("webtransport", ":protocol", "'webtransport'")]
    [InlineData("websocket", "Sec-WebSocket-Version", "Sec-WebSocket-Version 13")]
    public async Task ACONNECTThatIsNotAWebSocketGetsAProblemNamingWhatIsWrongNotAPoll(string protocol, string field, string detail)
    {
        await using var app = await StartEmbeddingAppAsync(useWebSockets: true);
        using var client = Http2Client(ApiAddress(app));
        var topic = await client.CreateTopicAsync();
        using var request = new HttpRequestMessage(HttpMethod.Connect, $"subscriptions?topics={topic}")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        };
        request.Headers.Protocol = protocol;

        // Answered at once: a poll would wait out its timeout, past the client's bound.
        var (status, problem) = await client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Contains(detail, problem.GetProperty("errors").GetProperty(field)[0].GetString());
    }

    [Fact]
    public async Task AWebSocketToAnAppWithoutUseWebSocketsIsRefused501SayingSo()
    {
        await using var app = await StartEmbeddingAppAsync(useWebSockets: false);
        var api = ApiAddress(app);
        using var handler = new SocketsHttpHandler();
        using var invoker = new HttpMessageInvoker(handler);
        using var socket = Http2Socket();
        using var timeout = new CancellationTokenSource(WireClient.Bound);

        await Assert.ThrowsAsync<WebSocketException>(() => socket.ConnectAsync(LaharsubSocket.Address(api, ""), invoker, timeout.Token));

        Assert.Equal(HttpStatusCode.NotImplemented, socket.HttpStatusCode);
    }

    /// <summary>An application as the README embeds Laharsub, on one prior-knowledge h2c listener (no TLS to set up).</summary>
    private static async Task<WebApplication> StartEmbeddingAppAsync(bool useWebSockets)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, 0, listen => listen.Protocols = HttpProtocols.Http2));
        builder.Logging.ClearProviders();
        builder.Services.AddLaharsub();
        var app = builder.Build();
        app.UseExceptionHandler();
        app.UseStatusCodePages();
        app.UseCors();
        app.UseRateLimiter();
        if (useWebSockets)
        {
            app.UseWebSockets();
        }
        app.MapLaharsub("/ps");
        await app.StartAsync().WaitAsync(WireClient.Bound);
        return app;
    }

    private static Uri ApiAddress(WebApplication app) =>
        new(app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First() + "/ps/");

    private static HttpClient Http2Client(Uri api) => new()
    {
        BaseAddress = api,
        DefaultRequestVersion = HttpVersion.Version20,
        DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
        Timeout = WireClient.Bound,
    };

    private static ClientWebSocket Http2Socket()
    {
        var socket = new ClientWebSocket();
        socket.Options.HttpVersion = HttpVersion.Version20;
        socket.Options.HttpVersionPolicy = HttpVersionPolicy.RequestVersionExact;
        socket.Options.AddSubProtocol(LaharsubSocket.SubProtocol);
        socket.Options.CollectHttpResponseDetails = true;
        return socket;
    }

    private static async Task<System.Text.Json.JsonElement> ReceiveJsonAsync(ClientWebSocket socket, CancellationToken cancellationToken)
    {
        var buffer = new byte[16 * 1024];
        var received = await socket.ReceiveAsync(buffer, cancellationToken);
        Assert.True(received.EndOfMessage, "a frame fits the buffer");
        return System.Text.Json.JsonDocument.Parse(buffer.AsMemory(0, received.Count)).RootElement.Clone();
    }
}
