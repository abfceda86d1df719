using System.Net;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// A wildcard is a media range for <c>Accept</c>, not a message's type: a publish that sends one (as a
/// generator does when an API declares its body <c>*/*</c>) is refused with a problem naming Content-Type
/// that says what to send, and stores nothing.
/// </summary>
public sealed class WildcardContentTypeTests : IAsyncLifetime
{
    private LaharsubTestServer _server = null!;
    private HttpClient _client = null!;
    private long _topic;

    public async Task InitializeAsync()
    {
        _server = await LaharsubTestServer.StartAsync();
        _client = _server.CreateClient();
        _topic = await _client.CreateTopicAsync();
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        await _server.DisposeAsync();
    }

    [Theory]
    [InlineData("*/*")]
    [InlineData("text/*")]
    [InlineData("*/json")]
    [InlineData("application/*+json")]
    [InlineData("*/*; charset=utf-8")]
    public async Task AWildcardContentTypeIsRefusedNamingContentTypeAndStoresNothing(string contentType)
    {
        var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{_topic}") { Content = new ByteArrayContent("hello"u8.ToArray()) };
        request.Content.Headers.TryAddWithoutValidation("Content-Type", contentType);

        var (status, problem) = await _client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.BadRequest, status);
        var error = problem.GetProperty("errors").GetProperty("Content-Type")[0].GetString();
        Assert.Contains("wildcard", error, StringComparison.Ordinal);
        Assert.Contains("application/octet-stream", error, StringComparison.Ordinal);
        var info = await _client.GetTopicAsync(_topic);
        Assert.Equal(0, info.GetProperty("lastMessageId").GetInt64());
    }

    [Theory]
    [InlineData("application/json")]
    [InlineData("text/plain; charset=utf-8")]
    [InlineData("application/vnd.example+json")]
    [InlineData("image/png")]
    public async Task AConcreteContentTypeIsStoredAsSent(string contentType)
    {
        var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{_topic}") { Content = new ByteArrayContent("{}"u8.ToArray()) };
        request.Content.Headers.TryAddWithoutValidation("Content-Type", contentType);

        using var response = await _client.SendAsync(request).WaitAsync(WireClient.Bound);
        using var poll = await _client.GetAsync($"subscriptions?topics={_topic}:1&timeout=0").WaitAsync(WireClient.Bound);
        using var answer = System.Text.Json.JsonDocument.Parse(await poll.Content.ReadAsStringAsync().WaitAsync(WireClient.Bound));

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        Assert.Equal(contentType, answer.RootElement.GetProperty("messages")[0].GetProperty("contentType").GetString());
    }
}
