using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// An upgrade to a WebSocket that the server does not accept is refused at once, on both paths (the fast path
/// hands such an upgrade to the pipeline); before, it was served as a long poll, held for its whole timeout.
/// </summary>
public sealed class WebSocketHandshakeTests
{
    /// <summary>Far under the poll's default 30 s hold, so an answer within it came at once.</summary>
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(5);

    private static string Upgrade(long topic, string connection, string version, string key) =>
        $"GET /ps/subscriptions?topics={topic} HTTP/1.1\r\nHost: test\r\nConnection: {connection}\r\nUpgrade: websocket\r\n"
        + $"Sec-WebSocket-Version: {version}\r\nSec-WebSocket-Key: {key}\r\n\r\n";

    [Theory]
    [InlineData("8")]
    [InlineData("14")]
    [InlineData("")]
    public async Task AnotherWebSocketVersionIsAnswered426NamingTheVersionThisServerSpeaks(string version)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var timeout = new CancellationTokenSource(Bound);

        var answer = await RawHttp.ExchangeAsync(server.BaseAddress,
            Encoding.ASCII.GetBytes(Upgrade(topic, "Upgrade", version, "dGhlIHNhbXBsZSBub25jZQ==")), timeout.Token);

        Assert.True(answer is not null, "the server closed the connection without answering");
        Assert.Equal(426, answer.Status);
        Assert.Equal("13", answer.Header("Sec-WebSocket-Version"));
        Assert.Equal("websocket", answer.Header("Upgrade"));
        Assert.StartsWith("application/problem+json", answer.Header("Content-Type"));
        var problem = JsonDocument.Parse(answer.Body).RootElement;
        Assert.True(problem.GetProperty("errors").TryGetProperty("Sec-WebSocket-Version", out _), answer.BodyText);
    }

    [Theory]
    [InlineData("Upgrade", "not-a-key", "Sec-WebSocket-Key")]
    [InlineData("keep-alive", "dGhlIHNhbXBsZSBub25jZQ==", "Connection")]
    public async Task AnotherBrokenHandshakeIsAnswered400NamingTheHeader(string connection, string key, string named)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var timeout = new CancellationTokenSource(Bound);

        var answer = await RawHttp.ExchangeAsync(server.BaseAddress, Encoding.ASCII.GetBytes(Upgrade(topic, connection, "13", key)), timeout.Token);

        Assert.True(answer is not null, "the server closed the connection without answering");
        Assert.Equal(400, answer.Status);
        Assert.True(JsonDocument.Parse(answer.Body).RootElement.GetProperty("errors").TryGetProperty(named, out _), answer.BodyText);
    }
}
