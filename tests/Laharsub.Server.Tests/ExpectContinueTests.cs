using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// A publisher that sends <c>Expect: 100-continue</c> holds its body back until the server says go on. A
/// publish refused without its body is answered at once, before <c>100 Continue</c>, instead of leaving the
/// client to send the body for nothing, or the server to wait for a body that never comes.
/// </summary>
public sealed class ExpectContinueTests : IAsyncLifetime
{
    private const int MaxMessageBytes = 1000;

    /// <summary>Far under Kestrel's own wait for a missing body, so an answer within it came before the body.</summary>
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(5);

    private LaharsubTestServer _server = null!;
    private HttpClient _client = null!;
    private long _topic;
    private string _epoch = "";

    public async Task InitializeAsync()
    {
        _server = await LaharsubTestServer.StartAsync(o => o.MaxMessageBytes = MaxMessageBytes);
        _client = _server.CreateClient();
        _topic = await _client.CreateTopicAsync();
        _epoch = (await _client.GetTopicAsync(_topic)).GetProperty("epoch").GetString()!;
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        await _server.DisposeAsync();
    }

    [Theory]
    [InlineData("topics/999999", "", 10, 404, "topicId")]
    [InlineData("topics/abc", "", 10, 400, "topicId")]
    [InlineData("topics/{topic}", "If-Match: \"0123456789abcdef\"\r\n", 10, 412, "epoch")]
    [InlineData("topics/{topic}", "If-Match: nonsense\r\n", 10, 400, "If-Match")]
    [InlineData("topics/{topic}", "", MaxMessageBytes + 1, 413, "MaxMessageBytes")]
    [InlineData("topics/publish?topics={topic},999999", "", 10, 404, "topic 999999 does not exist")]
    [InlineData("topics/publish?topics=999999~0123456789abcdef", "", 10, 404, "topic 999999 does not exist")]
    [InlineData("topics/publish?topics={topic}~0123456789abcdef", "", 10, 412, "epochMismatch")]
    public async Task APublishRefusedWithoutItsBodyIsAnsweredBefore100Continue(string path, string headers, int contentLength, int status, string named)
    {
        var head = $"POST /ps/{path.Replace("{topic}", _topic.ToString())} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n"
            + $"Content-Length: {contentLength}\r\nExpect: 100-continue\r\n{headers}\r\n";
        using var timeout = new CancellationTokenSource(Bound);

        var (first, final) = await RawHttp.ExchangeExpectingContinueAsync(_server.BaseAddress, Encoding.ASCII.GetBytes(head),
            new byte[contentLength], timeout.Token);

        Assert.True(first is not null, "the server closed the connection without answering");
        Assert.Null(final);
        Assert.Equal(status, first.Status);
        // The client holds the body back: the server closes rather than wait to drain it.
        Assert.Equal("close", first.Header("Connection"));
        Assert.StartsWith("application/problem+json", first.Header("Content-Type"));
        Assert.Contains(named, first.BodyText);
        Assert.Equal(0, (await _client.GetTopicAsync(_topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Theory]
    [InlineData(null, 401)]
    [InlineData("""{"subscribe":["*"]}""", 403)]
    public async Task APublishWithoutTheRightTokenIsAnsweredBefore100Continue(string? claim, int status)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        using var admin = server.CreateClient();
        admin.DefaultRequestHeaders.Authorization = new("Bearer", TestTokens.Grant(Access.JwtServerFixture.Everything));
        var topic = await admin.CreateTopicAsync();
        var authorization = claim is null ? "" : $"Authorization: Bearer {TestTokens.Grant(claim)}\r\n";
        var head = $"POST /ps/topics/{topic} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
            + $"Expect: 100-continue\r\n{authorization}\r\n";
        using var timeout = new CancellationTokenSource(Bound);

        var (first, final) = await RawHttp.ExchangeExpectingContinueAsync(server.BaseAddress, Encoding.ASCII.GetBytes(head),
            "hello"u8.ToArray(), timeout.Token);

        Assert.Equal(status, first?.Status);
        Assert.Null(final);
        Assert.StartsWith("application/problem+json", first!.Header("Content-Type"));
        Assert.Equal(0, (await admin.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task APublishToSeveralKnownTopicsGets100ContinueThenIsPublished()
    {
        var other = await _client.CreateTopicAsync();
        var head = $"POST /ps/topics/publish?topics={_topic}~{_epoch},{other} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
            + "Expect: 100-continue\r\n\r\n";
        using var timeout = new CancellationTokenSource(Bound);

        var (first, final) = await RawHttp.ExchangeExpectingContinueAsync(_server.BaseAddress, Encoding.ASCII.GetBytes(head),
            "hello"u8.ToArray(), timeout.Token);

        Assert.Equal(100, first?.Status);
        Assert.True(final is not null, "no answer after the body");
        Assert.Equal(201, final.Status);
        Assert.Equal(2, JsonDocument.Parse(final.Body).RootElement.GetProperty("messages").GetArrayLength());
    }

    [Fact]
    public async Task APublishToAKnownTopicGets100ContinueThenIsPublished()
    {
        var head = $"POST /ps/topics/{_topic} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
            + $"Expect: 100-continue\r\nIf-Match: \"{_epoch}\"\r\n\r\n";
        using var timeout = new CancellationTokenSource(Bound);

        var (first, final) = await RawHttp.ExchangeExpectingContinueAsync(_server.BaseAddress, Encoding.ASCII.GetBytes(head),
            "hello"u8.ToArray(), timeout.Token);

        Assert.Equal(100, first?.Status);
        Assert.True(final is not null, "no answer after the body");
        Assert.Equal(201, final.Status);
        Assert.Equal(1, JsonDocument.Parse(final.Body).RootElement.GetProperty("messageId").GetInt64());
        var poll = await _client.PollAsync($"topics={_topic}:1&timeout=0");
        Assert.Equal("hello", Assert.Single(poll.Messages).Text);
    }
}
