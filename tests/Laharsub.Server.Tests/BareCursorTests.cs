using System.Net;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// Laharsub:RequireEpochForCursors: on, a cursor above 1 without its topic's epoch is refused on every
/// transport, because it could name a message of an earlier incarnation and skip unseen; off (the default),
/// it is accepted as before.
/// </summary>
public sealed class BareCursorTests
{
    private static Task<LaharsubTestServer> StartRequiringEpochsAsync() =>
        LaharsubTestServer.StartAsync(o => o.RequireEpochForCursors = true);

    private static async Task<(long Topic, string Epoch)> TopicWithMessagesAsync(HttpClient client, int count)
    {
        var topic = await client.CreateTopicAsync();
        for (var i = 1; i <= count; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }
        var epoch = (await client.GetTopicAsync(topic)).GetProperty("epoch").GetString()!;
        return (topic, epoch);
    }

    private static async Task<JsonElement> ProblemAsync(HttpResponseMessage response)
    {
        var text = await response.Content.ReadAsStringAsync().WaitAsync(WireClient.Bound);
        Assert.True(response.StatusCode == HttpStatusCode.BadRequest, $"expected 400, got {(int)response.StatusCode}: {text}");
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        return JsonDocument.Parse(text).RootElement.Clone();
    }

    [Theory]
    [InlineData("topics={0}:3", "topics")]
    [InlineData("subs[0][topicid]={0}&subs[0][from]=3", "subs[0][from]")]
    public async Task APollWithABareCursorAbove1IsRefusedNamingTheFieldAndSayingToAddTheEpoch(string query, string field)
    {
        await using var server = await StartRequiringEpochsAsync();
        using var client = server.CreateClient();
        var (topic, _) = await TopicWithMessagesAsync(client, 3);

        using var response = await client.GetAsync("subscriptions?" + string.Format(query, topic)).WaitAsync(WireClient.Bound);

        var problem = await ProblemAsync(response);
        var error = problem.GetProperty("errors").GetProperty(field)[0].GetString()!;
        Assert.Contains("add the topic's epoch", error);
        Assert.Contains("<epoch>", error);
    }

    [Theory]
    [InlineData("topics={0}:3~{1}")]
    [InlineData("subs[0][topicid]={0}&subs[0][from]=3&subs[0][epoch]={1}")]
    [InlineData("topics={0}:1")]
    public async Task APollWithAnEpochOrFromEverythingRetainedIsServedWhenEpochsAreRequired(string query)
    {
        await using var server = await StartRequiringEpochsAsync();
        using var client = server.CreateClient();
        var (topic, epoch) = await TopicWithMessagesAsync(client, 3);

        var answer = await client.PollAsync(string.Format(query, topic, epoch) + "&timeout=0");

        Assert.Equal(HttpStatusCode.OK, answer.Status);
        Assert.Equal("m3", answer.Messages[^1].Text);
    }

    [Fact]
    public async Task ABareCursorIsServedAsBeforeByDefault()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _) = await TopicWithMessagesAsync(client, 3);

        var answer = await client.PollAsync($"topics={topic}:2&timeout=0");

        Assert.Equal(HttpStatusCode.OK, answer.Status);
        Assert.Equal(["m2", "m3"], answer.Messages.Select(m => m.Text));
    }

    [Fact]
    public async Task AStreamWithABareCursorIsRefusedWhenEpochsAreRequiredAndOpensByDefault()
    {
        await using var strict = await StartRequiringEpochsAsync();
        await using var lenient = await LaharsubTestServer.StartAsync();
        using var strictClient = strict.CreateClient();
        using var lenientClient = lenient.CreateClient();
        var (strictTopic, _) = await TopicWithMessagesAsync(strictClient, 3);
        var (lenientTopic, _) = await TopicWithMessagesAsync(lenientClient, 3);

        using var refused = await EventStreamReader.RequestAsync(strictClient, $"topics={strictTopic}:2");
        await using var served = await EventStreamReader.OpenAsync(lenientClient, $"topics={lenientTopic}:2");
        await served.ReadEventAsync("subscribed");
        var first = await served.ReadEventAsync("message");

        var problem = await ProblemAsync(refused);
        Assert.Contains("add the topic's epoch", problem.GetProperty("errors").GetProperty("topics")[0].GetString());
        Assert.Equal(2, first.Json.GetProperty("messageId").GetInt64());
    }

    [Fact]
    public async Task AStreamResumesFromTheLastEventIdItWroteWhenEpochsAreRequired()
    {
        await using var server = await StartRequiringEpochsAsync();
        using var client = server.CreateClient();
        var (topic, _) = await TopicWithMessagesAsync(client, 3);
        string lastEventId;
        await using (var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}:1"))
        {
            await stream.ReadEventAsync("subscribed");
            await stream.ReadEventAsync("message");
            var second = await stream.ReadEventAsync("message");
            lastEventId = second.IdField!;
        }

        await using var resumed = await EventStreamReader.OpenAsync(client, $"topics={topic}:1", lastEventId);
        await resumed.ReadEventAsync("subscribed");
        var next = await resumed.ReadEventAsync("message");

        Assert.Contains("~", lastEventId);
        Assert.Equal(3, next.Json.GetProperty("messageId").GetInt64());
    }

    [Fact]
    public async Task ABareLastEventIdAbove1IsRefusedNamingItWhenEpochsAreRequired()
    {
        await using var server = await StartRequiringEpochsAsync();
        using var client = server.CreateClient();
        var (topic, _) = await TopicWithMessagesAsync(client, 3);

        using var response = await EventStreamReader.RequestAsync(client, $"topics={topic}:1", lastEventId: $"{topic}:3");

        var problem = await ProblemAsync(response);
        Assert.Contains("add the topic's epoch", problem.GetProperty("errors").GetProperty("Last-Event-ID")[0].GetString());
    }

    [Fact]
    public async Task AWebSocketSubscribeFrameWithABareCursorGetsAProblemAndTheSocketStays()
    {
        await using var server = await StartRequiringEpochsAsync();
        using var client = server.CreateClient();
        var (topic, epoch) = await TopicWithMessagesAsync(client, 3);
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync($$"""{"type":"subscribe","id":"s1","topics":"{{topic}}:2"}""");
        var problem = await socket.ReceiveAsync("problem");
        await socket.SendAsync($$"""{"type":"subscribe","id":"s2","topics":"{{topic}}:2~{{epoch}}"}""");
        var subscribed = await socket.ReceiveAsync("subscribed");
        var message = await socket.ReceiveAsync("message");

        Assert.Equal("s1", problem.GetProperty("id").GetString());
        Assert.Equal(400, problem.GetProperty("problem").GetProperty("status").GetInt32());
        Assert.Contains("add the topic's epoch", problem.GetProperty("problem").GetProperty("errors").GetProperty("topics")[0].GetString());
        Assert.Equal("s2", subscribed.GetProperty("id").GetString());
        Assert.Equal(2, message.GetProperty("message").GetProperty("messageId").GetInt64());
    }

    [Fact]
    public async Task AWebSocketSubscribeFrameWithABareCursorIsServedByDefault()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _) = await TopicWithMessagesAsync(client, 3);
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync($$"""{"type":"subscribe","id":"s1","topics":"{{topic}}:2"}""");
        var subscribed = await socket.ReceiveAsync("subscribed");
        var message = await socket.ReceiveAsync("message");

        Assert.Equal("s1", subscribed.GetProperty("id").GetString());
        Assert.Equal(2, message.GetProperty("message").GetProperty("messageId").GetInt64());
    }

    [Fact]
    public async Task AWebSocketOpenedWithABareCursorAbove1IsRefused400WhenEpochsAreRequired()
    {
        await using var server = await StartRequiringEpochsAsync();
        using var client = server.CreateClient();
        var (topic, epoch) = await TopicWithMessagesAsync(client, 3);

        var refused = await LaharsubSocket.RefusedAsync(server.ApiAddress, $"topics={topic}:2");
        await using var opened = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}:2~{epoch}");
        var subscribed = await opened.ReceiveAsync("subscribed");

        Assert.Equal(HttpStatusCode.BadRequest, refused);
        Assert.Equal(2, subscribed.GetProperty("topics")[0].GetProperty("from").GetInt64());
    }
}
