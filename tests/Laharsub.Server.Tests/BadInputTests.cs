using System.Net;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>Every kind of bad request gets a 4xx problem detail naming what was wrong, and changes nothing.</summary>
public sealed class BadInputTests : IAsyncLifetime
{
    private LaharsubTestServer _server = null!;
    private HttpClient _client = null!;
    private long _topic;

    public async Task InitializeAsync()
    {
        _server = await LaharsubTestServer.StartAsync(o => { o.MaxSubscriptionsPerPoll = 3; o.MaxPollTimeout = TimeSpan.FromSeconds(60); o.DefaultPollTimeout = TimeSpan.FromSeconds(1); });
        _client = _server.CreateClient();
        _topic = await _client.CreateTopicAsync();
        await _client.CreateTopicAsync();
        await _client.PublishTextAsync(_topic, "kept");
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        await _server.DisposeAsync();
    }

    [Theory]
    [InlineData("", "subs")]
    [InlineData("topics=abc", "topics")]
    [InlineData("topics=-1", "topics")]
    [InlineData("topics=0", "topics")]
    [InlineData("topics=99999999999999999999", "topics")]
    [InlineData("topics=1:0", "topics")]
    [InlineData("topics=1:-5", "topics")]
    [InlineData("topics=1:x", "topics")]
    [InlineData("topics=1,,2", "topics")]
    [InlineData("topics=1,1", "topics")]
    [InlineData("topics=1,2,3,4", "topics")]
    [InlineData("topics=1&topics=2", "topics")]
    [InlineData("topics=1&TOPICS=2", "TOPICS")]
    [InlineData("topics=1&timeout=1&timeout=2", "timeout")]
    [InlineData("subs[0][topicid]=1&subs[1][topicid]=1", "subs[1][topicid]")]
    [InlineData("subs[0][topicid]=1&subs[2][topicid]=2", "subs[1]")]
    [InlineData("subs[1][topicid]=1", "subs[0]")]
    [InlineData("subs[0][topicid]=1&subs[0][topicid]=2", "subs[0][topicid]")]
    [InlineData("subs[0][from]=3", "subs[0][topicid]")]
    [InlineData("subs[0][topicid]=x", "subs[0][topicid]")]
    [InlineData("subs[0][topicid]=1&subs[0][from]=-1", "subs[0][from]")]
    [InlineData("subs[0][topicid]=1&subs[01][topicid]=2", "subs[01][topicid]")]
    [InlineData("subs[0][topic]=1", "subs[0][topic]")]
    [InlineData("subs[5][topicid]=1", "subs")]
    [InlineData("subs[0][topicid]=1&topics=2", "topics")]
    [InlineData("topics=1&timeout=abc", "timeout")]
    [InlineData("topics=1&timeout=-1", "timeout")]
    [InlineData("topics=1&timeout=61", "timeout")]
    [InlineData("topics=1&timeout=1.5", "timeout")]
    [InlineData("topics=1&colour=blue", "colour")]
    [InlineData("topics=2%00%00:1%00&timeout=0%00", "timeout")]
    [InlineData("topics=2%00%00:1%00", "topics")]
    [InlineData("topics=1:1%00", "topics")]
    [InlineData("subs[0][topicid]=1%00", "subs[0][topicid]")]
    [InlineData("subs[0][topicid]=1&subs[0][from]=1%00", "subs[0][from]")]
    [InlineData("subs[1%00][topicid]=1&subs[0][topicid]=2", "subs[1\0][topicid]")]
    public async Task ABadPollIs400NamingTheParameter(string query, string parameter)
    {
        var (status, problem) = await _client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, "subscriptions?" + query));

        Assert.Equal(HttpStatusCode.BadRequest, status);
        var errors = problem.GetProperty("errors");
        Assert.True(errors.TryGetProperty(parameter, out var messages), $"expected an error for '{parameter}', got {errors}");
        Assert.False(string.IsNullOrWhiteSpace(messages[0].GetString()));
        await AssertNothingChangedAsync();
    }

    [Theory]
    [InlineData("GET", "topics/abc")]
    [InlineData("GET", "topics/-3")]
    [InlineData("GET", "topics/0")]
    [InlineData("GET", "topics/9223372036854775808")]
    [InlineData("DELETE", "topics/1x")]
    [InlineData("POST", "topics/%20")]
    [InlineData("GET", "topics?after=-1")]
    [InlineData("GET", "topics?limit=0")]
    [InlineData("GET", "topics?limit=5000")]
    [InlineData("GET", "topics?after=0%00&limit=1%00", "after")]
    [InlineData("GET", "topics?limit=1%00", "limit")]
    public async Task AMalformedIdOrPageIs400(string method, string path, string? parameter = null)
    {
        var request = new HttpRequestMessage(new HttpMethod(method), path) { Content = method == "POST" ? new ByteArrayContent([1]) : null };

        var (status, problem) = await _client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.TryGetProperty("errors", out var errors));
        if (parameter is not null)
        {
            Assert.True(errors.TryGetProperty(parameter, out _), $"expected an error for '{parameter}', got {errors}");
        }
        await AssertNothingChangedAsync();
    }

    [Fact]
    public async Task AnEmptyMessageIs400()
    {
        var (status, problem) = await _client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{_topic}") { Content = new ByteArrayContent([]) });

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Contains("empty", problem.GetProperty("errors").GetProperty("body")[0].GetString());
        await AssertNothingChangedAsync();
    }

    [Fact]
    public async Task AnUnparseableContentTypeIs400()
    {
        var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{_topic}") { Content = new ByteArrayContent([1]) };
        request.Content.Headers.TryAddWithoutValidation("Content-Type", "not a media type");

        var (status, problem) = await _client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty("Content-Type", out _));
        await AssertNothingChangedAsync();
    }

    [Fact]
    public async Task AContentTypeLongerThan256CharactersIs400()
    {
        var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{_topic}") { Content = new ByteArrayContent([1]) };
        request.Content.Headers.TryAddWithoutValidation("Content-Type", "text/plain; x=" + new string('a', 300));

        var (status, problem) = await _client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Contains("256", problem.GetProperty("errors").GetProperty("Content-Type")[0].GetString());
        await AssertNothingChangedAsync();
    }

    [Theory]
    [InlineData("text/plain; a=\"\u0001\"")]
    [InlineData("text/plain\u0001")]
    [InlineData("text/plain; a=\"\u007f\"")]
    public async Task AContentTypeWithAControlCharacterIs400(string contentType)
    {
        // Kestrel lets control characters other than CR, LF and NUL through in header values; HttpClient would not send them.
        var request = $"POST /ps/topics/{_topic} HTTP/1.1\r\nHost: x\r\nContent-Type: {contentType}\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx";
        using var timeout = new CancellationTokenSource(WireClient.Bound);

        var response = await RawHttp.ExchangeAsync(_server.BaseAddress, System.Text.Encoding.Latin1.GetBytes(request), timeout.Token);

        Assert.NotNull(response);
        Assert.Equal(400, response.Status);
        using var problem = System.Text.Json.JsonDocument.Parse(response.Body);
        Assert.Contains("control characters", problem.RootElement.GetProperty("errors").GetProperty("Content-Type")[0].GetString());
        await AssertNothingChangedAsync();
    }

    [Fact]
    public async Task AContentTypeWithAControlCharacterIsRefusedBeforeTheBodyIsRead()
    {
        // The body is declared and never sent: the answer can come only from a check made before reading it.
        var request = $"POST /ps/topics/{_topic} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain; a=\"\u0001\"\r\nContent-Length: 262144\r\nConnection: close\r\n\r\n";
        using var timeout = new CancellationTokenSource(WireClient.Bound);

        var response = await RawHttp.ExchangeAsync(_server.BaseAddress, System.Text.Encoding.Latin1.GetBytes(request), timeout.Token);

        Assert.NotNull(response);
        Assert.Equal(400, response.Status);
        await AssertNothingChangedAsync();
    }

    [Theory]
    [InlineData("PUT", "topics/1")]
    [InlineData("PATCH", "topics")]
    [InlineData("DELETE", "topics")]
    [InlineData("POST", "subscriptions")]
    public async Task AWrongMethodIs405NamingTheAllowedOnes(string method, string path)
    {
        using var response = await _client.SendAsync(new HttpRequestMessage(new HttpMethod(method), path)).WaitAsync(WireClient.Bound);
        var (status, problem) = await _client.SendForProblemAsync(new HttpRequestMessage(new HttpMethod(method), path));

        Assert.Equal(HttpStatusCode.MethodNotAllowed, status);
        var allowed = response.Content.Headers.Allow;
        Assert.NotEmpty(allowed);
        var detail = problem.GetProperty("detail").GetString();
        Assert.Contains($"{method} is not allowed", detail);
        Assert.All(allowed, allowedMethod => Assert.Contains(allowedMethod, detail));
        await AssertNothingChangedAsync();
    }

    [Theory]
    [InlineData("topic/1")]
    [InlineData("subscription")]
    [InlineData("topics/1/messages")]
    public async Task AnUnknownPathIs404ListingTheResourcesThatExist(string path)
    {
        var (status, problem) = await _client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, path));

        Assert.Equal(HttpStatusCode.NotFound, status);
        var detail = problem.GetProperty("detail").GetString();
        Assert.Contains($"'/ps/{path}'", detail);
        Assert.Contains("/ps/topics (GET, HEAD, POST)", detail);
        Assert.Contains("/ps/topics/{topicId} (DELETE, GET, HEAD, POST)", detail);
        Assert.Contains("/ps/subscriptions (GET)", detail);
        Assert.Contains("/health", detail);
        await AssertNothingChangedAsync();
    }

    private async Task AssertNothingChangedAsync()
    {
        var info = await _client.GetTopicAsync(_topic);
        Assert.Equal(1, info.GetProperty("lastMessageId").GetInt64());
        Assert.Equal(0, info.GetProperty("waitingPolls").GetInt32());
        Assert.Equal(2, (await _client.GetStringAsync("topics").WaitAsync(WireClient.Bound)).Split("\"topicId\"").Length - 1);
    }
}
