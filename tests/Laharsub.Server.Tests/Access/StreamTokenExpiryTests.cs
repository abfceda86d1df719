using System.Net;
using System.Net.WebSockets;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Access;

/// <summary>
/// A stream outlives no token: when the token it was opened with expires, an SSE stream ends with a
/// <c>reconnect</c> event whose reason is <c>tokenExpired</c>, and a WebSocket closes with 4001.
/// </summary>
public sealed class StreamTokenExpiryTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);
    private const string Subscriber = """{"subscribe":true,"create":true}""";

    private static async Task<(LaharsubTestServer Server, FakeTimeProvider Clock, string Token, long Topic)> StartAsync()
    {
        // The token expires an hour after it is made (TestTokens), and the server's clock starts after that,
        // at the real time: on that clock the token expires within the hour.
        var token = TestTokens.Grant(Subscriber);
        var clock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock), settings: TestTokens.JwtSettings()).WaitAsync(Bound);
        using var client = server.CreateClient();
        using var create = TestTokens.Request(HttpMethod.Post, "topics", token);
        using var created = await client.SendAsync(create).WaitAsync(Bound);
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        var topic = TestTokens.ParseJson(await created.Content.ReadAsStringAsync()).GetProperty("topicId").GetInt64();
        return (server, clock, token, topic);
    }

    [Fact]
    public async Task AnEventStreamEndsWithTokenExpiredWhenItsQueryTokenExpires()
    {
        var (server, clock, token, topic) = await StartAsync();
        await using var _ = server;
        using var client = server.CreateClient();
        using var request = new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&access_token={token}");
        request.Headers.Accept.ParseAdd("text/event-stream");
        using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).WaitAsync(Bound);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var reader = new StreamReader(await response.Content.ReadAsStreamAsync());
        using var timeout = new CancellationTokenSource(Bound);
        await ReadUntilAsync(reader, "event: subscribed", timeout.Token);

        clock.Advance(TimeSpan.FromHours(1) + TimeSpan.FromSeconds(1));

        await ReadUntilAsync(reader, "event: reconnect", timeout.Token);
        Assert.Contains("\"reason\":\"tokenExpired\"", await reader.ReadLineAsync(timeout.Token));
        Assert.Null(await ReadUntilEndAsync(reader, timeout.Token));
    }

    [Fact]
    public async Task AWebSocketClosesWith4001WhenItsTokenExpires()
    {
        var (server, clock, token, topic) = await StartAsync();
        await using var _ = server;
        using var socket = new ClientWebSocket();
        socket.Options.AddSubProtocol("laharsub.v1");
        socket.Options.SetRequestHeader("Authorization", "Bearer " + token);
        using var timeout = new CancellationTokenSource(Bound);
        var address = new UriBuilder(new Uri(server.ApiAddress, $"subscriptions?topics={topic}")) { Scheme = "ws" }.Uri;
        await socket.ConnectAsync(address, timeout.Token);
        var buffer = new byte[16 * 1024];
        var first = await socket.ReceiveAsync(buffer, timeout.Token);
        Assert.Contains("\"type\":\"subscribed\"", Encoding.UTF8.GetString(buffer, 0, first.Count));

        clock.Advance(TimeSpan.FromHours(1) + TimeSpan.FromSeconds(1));

        var closing = await socket.ReceiveAsync(buffer, timeout.Token);
        Assert.Equal(WebSocketMessageType.Close, closing.MessageType);
        Assert.Equal(4001, (int)socket.CloseStatus!);
        Assert.Contains("fresh token", socket.CloseStatusDescription);
    }

    private static async Task ReadUntilAsync(StreamReader reader, string line, CancellationToken cancellationToken)
    {
        while (await reader.ReadLineAsync(cancellationToken) is { } read)
        {
            if (read == line)
            {
                return;
            }
        }
        throw new Xunit.Sdk.XunitException($"The stream ended before '{line}'.");
    }

    /// <summary>Reads to the end of the stream; null once it ended (a line after the last event would be returned).</summary>
    private static async Task<string?> ReadUntilEndAsync(StreamReader reader, CancellationToken cancellationToken)
    {
        while (await reader.ReadLineAsync(cancellationToken) is { } read)
        {
            if (read.Length > 0)
            {
                return read;
            }
        }
        return null;
    }
}
