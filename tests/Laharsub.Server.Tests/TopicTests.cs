using System.Net;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

public sealed class TopicTests
{
    [Fact]
    public async Task CreatingATopicAnswers201WithItsLocationAndId()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();

        using var first = await client.PostAsync("topics", null).WaitAsync(WireClient.Bound);
        using var second = await client.PostAsync("topics", null).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Created, first.StatusCode);
        Assert.Equal("/ps/topics/1", first.Headers.Location!.OriginalString);
        Assert.Equal("/ps/topics/2", second.Headers.Location!.OriginalString);
        using var json = JsonDocument.Parse(await second.Content.ReadAsStringAsync());
        Assert.Equal(2, json.RootElement.GetProperty("topicId").GetInt64());
    }

    [Fact]
    public async Task TopicInfoReportsMessagesBytesWaitersAndCreationTime()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var before = DateTimeOffset.UtcNow.AddSeconds(-1);
        var topic = await client.CreateTopicAsync();
        await client.PublishAsync(topic, [1, 2, 3]);
        await client.PublishAsync(topic, [4, 5]);

        var info = await client.GetTopicAsync(topic);

        Assert.Equal(topic, info.GetProperty("topicId").GetInt64());
        Assert.Equal(2, info.GetProperty("lastMessageId").GetInt64());
        Assert.Equal(1, info.GetProperty("firstRetainedMessageId").GetInt64());
        Assert.Equal(2, info.GetProperty("retainedMessages").GetInt32());
        Assert.Equal(5, info.GetProperty("retainedBytes").GetInt64());
        Assert.Equal(0, info.GetProperty("waitingPolls").GetInt32());
        Assert.InRange(info.GetProperty("createdAt").GetDateTimeOffset(), before, DateTimeOffset.UtcNow.AddSeconds(1));
    }

    [Fact]
    public async Task AnUnknownTopicIs404WithAProblemDetail()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, "topics/77"));

        Assert.Equal(HttpStatusCode.NotFound, status);
        Assert.Equal(77, problem.GetProperty("topicId").GetInt64());
        Assert.Contains("Topic 77 does not exist", problem.GetProperty("detail").GetString());
    }

    [Fact]
    public async Task ListingTopicsPagesThroughAllOfThemInIdOrder()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        for (var i = 0; i < 5; i++)
        {
            await client.CreateTopicAsync();
        }
        using (await client.DeleteAsync("topics/3").WaitAsync(WireClient.Bound)) { }

        var seen = new List<long>();
        string? next = "topics?limit=2";
        while (next is not null)
        {
            using var json = JsonDocument.Parse(await client.GetStringAsync(next).WaitAsync(WireClient.Bound));
            seen.AddRange(json.RootElement.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()));
            next = json.RootElement.TryGetProperty("next", out var link) ? link.GetString() : null;
        }

        Assert.Equal([1, 2, 4, 5], seen);
    }

    [Fact]
    public async Task DeletingATopicAnswers204AndLaterRequestsGet404()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        using var deleted = await client.DeleteAsync($"topics/{topic}").WaitAsync(WireClient.Bound);
        using var info = await client.GetAsync($"topics/{topic}").WaitAsync(WireClient.Bound);
        using var deletedAgain = await client.DeleteAsync($"topics/{topic}").WaitAsync(WireClient.Bound);
        using var publish = await client.PostAsync($"topics/{topic}", new ByteArrayContent([1])).WaitAsync(WireClient.Bound);
        var poll = await client.PollAsync($"topics={topic}&timeout=0");

        Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, info.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, deletedAgain.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, publish.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, poll.Status);
    }

    [Fact]
    public async Task CreatingMoreThanMaxTopicsIs409AndCreatesNothing()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxTopics = 2);
        using var client = server.CreateClient();
        await client.CreateTopicAsync();
        await client.CreateTopicAsync();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, "topics"));
        using var list = JsonDocument.Parse(await client.GetStringAsync("topics").WaitAsync(WireClient.Bound));

        Assert.Equal(HttpStatusCode.Conflict, status);
        Assert.Contains("Laharsub:MaxTopics", problem.GetProperty("detail").GetString());
        Assert.Equal(2, list.RootElement.GetProperty("topics").GetArrayLength());
    }

    [Fact]
    public async Task HealthCheckAnswersHealthyWithEachChecksDescriptionAndData()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxRetainedBytes = 1000; o.MaxMessageBytes = 1000; });
        using var client = new HttpClient { BaseAddress = server.BaseAddress, Timeout = WireClient.Bound };

        using var response = await client.GetAsync("health").WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);
        using var report = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal("Healthy", report.RootElement.GetProperty("status").GetString());
        var check = report.RootElement.GetProperty("checks").GetProperty("laharsub");
        Assert.Equal("Healthy", check.GetProperty("status").GetString());
        Assert.Contains("0 of 1000 bytes", check.GetProperty("description").GetString());
        Assert.Equal(1000, check.GetProperty("data").GetProperty("maxRetainedBytes").GetInt64());
    }

    [Fact]
    public async Task ANearlyFullServerIsDegradedAndHealthNamesTheSettingToChange()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxRetainedBytes = 1000; o.MaxMessageBytes = 1000; });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        // A retained message costs more than its body (both wire forms and its objects, RetainedCost): 50 bytes cost over 90 % of 1000.
        await client.PublishAsync(topic, new byte[50]);

        using var response = await client.GetAsync(new Uri(server.BaseAddress, "health")).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        using var report = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal("Degraded", report.RootElement.GetProperty("status").GetString());
        var check = report.RootElement.GetProperty("checks").GetProperty("laharsub");
        Assert.Contains("Laharsub:MaxRetainedBytes", check.GetProperty("description").GetString());
        Assert.InRange(check.GetProperty("data").GetProperty("retainedBytes").GetInt64(), 901, 1000);
    }

    [Theory]
    [InlineData("ps/topics")]
    [InlineData("ps/topics/1")]
    [InlineData("health")]
    public async Task HeadAnswersWhereGetDoesWithoutABody(string path)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        await client.CreateTopicAsync();
        var uri = new Uri(server.BaseAddress, path);

        using var get = await client.GetAsync(uri).WaitAsync(WireClient.Bound);
        using var head = await client.SendAsync(new HttpRequestMessage(HttpMethod.Head, uri)).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.OK, get.StatusCode);
        Assert.Equal(HttpStatusCode.OK, head.StatusCode);
        Assert.Equal(get.Content.Headers.ContentType, head.Content.Headers.ContentType);
        Assert.Empty(await head.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task HeadOnThePollIs405AllowingGetAndConnectAsDocumented()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        using var head = await client.SendAsync(new HttpRequestMessage(HttpMethod.Head, $"subscriptions?topics={topic}&timeout=0")).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.MethodNotAllowed, head.StatusCode);
        // CONNECT is a WebSocket over HTTP/2 (RFC 8441).
        Assert.Equal(["CONNECT", "GET"], head.Content.Headers.Allow);
    }

    [Fact]
    public async Task HeadOnAnUnknownTopicIs404()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();

        using var head = await client.SendAsync(new HttpRequestMessage(HttpMethod.Head, "topics/5")).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.NotFound, head.StatusCode);
    }

    [Theory]
    [InlineData("9223372036854775807")]
    [InlineData("9223372036854775806")]
    [InlineData("2")]
    public async Task ListingAfterTheLastTopicAnswersAnEmptyPageAtOnce(string after)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        await client.CreateTopicAsync();
        await client.CreateTopicAsync();

        using var page = JsonDocument.Parse(await client.GetStringAsync($"topics?after={after}").WaitAsync(WireClient.Bound));

        Assert.Equal(0, page.RootElement.GetProperty("topics").GetArrayLength());
        Assert.False(page.RootElement.TryGetProperty("next", out _));
    }

    [Fact]
    public async Task CrossOriginPagesMayPublishAndSubscribe()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        using var preflight = new HttpRequestMessage(HttpMethod.Options, $"topics/{topic}");
        preflight.Headers.Add("Origin", "https://chat.example.com");
        preflight.Headers.Add("Access-Control-Request-Method", "POST");
        preflight.Headers.Add("Access-Control-Request-Headers", "content-type");
        using var preflightResponse = await client.SendAsync(preflight).WaitAsync(WireClient.Bound);

        using var poll = new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&timeout=0");
        poll.Headers.Add("Origin", "https://chat.example.com");
        using var pollResponse = await client.SendAsync(poll).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.NoContent, preflightResponse.StatusCode);
        Assert.Equal("*", preflightResponse.Headers.GetValues("Access-Control-Allow-Origin").Single());
        Assert.Contains("POST", preflightResponse.Headers.GetValues("Access-Control-Allow-Methods").Single());
        Assert.Equal("*", pollResponse.Headers.GetValues("Access-Control-Allow-Origin").Single());
    }

    [Fact]
    public async Task ConfiguredOriginsAreTheOnlyOnesAllowed()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.Cors.AllowedOrigins = ["https://chat.example.com"]);
        using var client = server.CreateClient();

        async Task<string?> AllowedOriginFor(string origin)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, "topics");
            request.Headers.Add("Origin", origin);
            using var response = await client.SendAsync(request).WaitAsync(WireClient.Bound);
            return response.Headers.TryGetValues("Access-Control-Allow-Origin", out var values) ? values.Single() : null;
        }

        Assert.Equal("https://chat.example.com", await AllowedOriginFor("https://chat.example.com"));
        Assert.Null(await AllowedOriginFor("https://evil.example.net"));
    }
}
