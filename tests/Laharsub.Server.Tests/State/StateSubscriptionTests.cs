using System.Net;
using System.Text.Json;
using Laharsub.Server.Tests.Streams;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using static Laharsub.Server.Tests.State.StateTopicTests;

namespace Laharsub.Server.Tests.State;

/// <summary>
/// Subscribing to state topics: the cursor <c>state</c> (the document first, then every change), the document in place
/// of a gap and after a reset, field-level conflation, on the long poll (both formats), SSE and WebSocket.
/// </summary>
public sealed class StateSubscriptionTests
{
    private const string Patch = "application/merge-patch+json";

    public static TheoryData<string> Formats => new() { "application/json", "multipart/mixed" };

    [Theory]
    [MemberData(nameof(Formats))]
    public async Task TheStateCursorGivesTheDocumentThenTheChangesAfterIt(string format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        var plain = await client.CreateTopicAsync();
        await client.PublishTextAsync(plain, "p1");
        await PatchAsync(client, topic, """{"a":1,"b":{"c":2}}""");
        await PatchAsync(client, topic, """{"b":{"c":null,"d":3}}""");

        var first = await client.PollAsync($"topics={topic}:state,{plain}:1&timeout=0", format);
        await PatchAsync(client, topic, """{"a":2}""");
        var next = await client.PollAsync($"topics={topic}:{first.Notices[0].Get("version") + 1}~{epoch}&timeout=0", format);

        var state = Assert.Single(first.Notices);
        Assert.Equal(("state", topic, epoch, 2L), (state.Type, state.TopicId, state.Json.GetProperty("epoch").GetString(), state.Get("version")));
        AssertJson("""{"a":1,"b":{"d":3}}""", state.Json.GetProperty("document").GetRawText());
        Assert.Equal(["p1"], first.Messages.Select(m => m.Text));
        var patch = Assert.Single(next.Messages);
        Assert.Equal((3L, Patch, """{"a":2}"""), (patch.MessageId, patch.ContentType, patch.Text));
    }

    [Fact]
    public async Task TheIndexedFormTakesTheStateCursorToo()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _, _) = await CreateStateTopicAsync(client);
        await PatchAsync(client, topic, """{"a":1}""");

        var poll = await client.PollAsync($"subs[0][topicid]={topic}&subs[0][from]=state&timeout=0");

        Assert.Equal((1L, """{"a":1}"""), (Assert.Single(poll.Notices).Get("version"), poll.Notices[0].Json.GetProperty("document").GetRawText()));
    }

    [Theory]
    [InlineData("topics={0}:state")]
    [InlineData("subs[0][topicid]={0}&subs[0][from]=state")]
    public async Task TheStateCursorOnATopicWithoutStateIsA400(string query)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var plain = await client.CreateTopicAsync();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, "subscriptions?" + string.Format(query, plain)));
        var streamStatus = (await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, "subscriptions?" + string.Format(query, plain))
        {
            Headers = { { "Accept", "text/event-stream" } },
        })).Status;

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty("topics", out _), problem.ToString());
        Assert.Contains("holds no state", problem.GetProperty("detail").GetString());
        Assert.Equal(HttpStatusCode.BadRequest, streamStatus);
    }

    [Fact]
    public async Task ACursorBehindRetentionGetsTheDocumentInsteadOfAGap()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 2);
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        for (var i = 1; i <= 5; i++)
        {
            await PatchAsync(client, topic, $$"""{"f{{i}}":{{i}}}""");
        }

        var poll = await client.PollAsync($"topics={topic}:1~{epoch}&timeout=0");

        var state = Assert.Single(poll.Notices);
        Assert.Equal(("state", 5L), (state.Type, state.Get("version")));
        AssertJson("""{"f1":1,"f2":2,"f3":3,"f4":4,"f5":5}""", state.Json.GetProperty("document").GetRawText());
        Assert.Empty(poll.Messages);
    }

    [Fact]
    public async Task AResetOnAStateTopicIsFollowedByItsDocument()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        await PatchAsync(client, topic, """{"a":1}""");

        var beyond = await client.PollAsync($"topics={topic}:9~{epoch}&timeout=0");
        var otherEpoch = await client.PollAsync($"topics={topic}:1~0123456789abcdef&timeout=0");

        foreach (var poll in new[] { beyond, otherEpoch })
        {
            Assert.Equal(["reset", "state"], poll.Notices.Select(n => n.Type));
            Assert.Equal(1, poll.Notices[1].Get("version"));
            Assert.Empty(poll.Messages);
        }
        Assert.Equal("epochChanged", otherEpoch.Notices[0].Json.GetProperty("reason").GetString());
    }

    [Fact]
    public async Task LatestComposesTheSkippedPatchesIntoOneAnnouncedAsConflated()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        await PatchAsync(client, topic, """{"a":1,"n":{"x":1}}""");
        await PatchAsync(client, topic, """{"b":1,"n":{"y":2}}""");
        await PatchAsync(client, topic, """{"a":2,"n":{"x":null}}""");

        var poll = await client.PollAsync($"topics={topic}:1~{epoch}&latest=true&timeout=0");

        var conflated = Assert.Single(poll.Notices);
        Assert.Equal(("conflated", 1L, 2L), (conflated.Type, conflated.Get("fromMessageId"), conflated.Get("toMessageId")));
        var composed = Assert.Single(poll.Messages);
        Assert.Equal((3L, Patch), (composed.MessageId, composed.ContentType));
        AssertJson("""{"a":2,"b":1,"n":{"x":null,"y":2}}""", composed.Text);
    }

    [Fact]
    public async Task ARunWithAReplacementConflatesToTheWholeDocument()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        await PatchAsync(client, topic, """{"a":1}""");
        using (await SendAsync(client, HttpMethod.Put, $"topics/{topic}/state", """{"b":1}""", "application/json"))
        {
        }
        await PatchAsync(client, topic, """{"c":1}""");

        var poll = await client.PollAsync($"topics={topic}:1~{epoch}&latest=true&timeout=0");

        var composed = Assert.Single(poll.Messages);
        Assert.Equal((3L, "application/json"), (composed.MessageId, composed.ContentType));
        AssertJson("""{"b":1,"c":1}""", composed.Text);
    }

    [Fact]
    public async Task PatchesThatDoNotComposeConflateToTheDocument()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        await PatchAsync(client, topic, """{"k":{"old":1}}""");
        await PatchAsync(client, topic, """{"k":5}""");
        await PatchAsync(client, topic, """{"k":{"new":1}}""");

        var poll = await client.PollAsync($"topics={topic}:2~{epoch}&latest=true&timeout=0");

        var state = Assert.Single(poll.Notices);
        Assert.Equal(("state", 3L), (state.Type, state.Get("version")));
        AssertJson("""{"k":{"new":1}}""", state.Json.GetProperty("document").GetRawText());
        Assert.Empty(poll.Messages);
    }

    [Fact]
    public async Task AnEventStreamSendsTheDocumentThenPatchesAndResumesFromLastEventId()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _, _) = await CreateStateTopicAsync(client);
        await PatchAsync(client, topic, """{"a":1}""");

        string lastId;
        await using (var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}:state"))
        {
            await stream.ReadEventAsync("subscribed");
            var state = (await stream.ReadEventAsync("notice")).Json;
            await PatchAsync(client, topic, """{"b":2}""");
            var patch = (await stream.ReadEventAsync("message")).Json;
            Assert.Equal(("state", 1L, """{"a":1}"""), (state.GetProperty("type").GetString(), state.GetProperty("version").GetInt64(), state.GetProperty("document").GetRawText()));
            Assert.Equal((2L, """{"b":2}"""), (patch.GetProperty("messageId").GetInt64(), patch.Text()));
            lastId = stream.LastEventId;
        }
        await PatchAsync(client, topic, """{"c":3}""");
        await using var resumed = await EventStreamReader.OpenAsync(client, $"topics={topic}:state", lastEventId: lastId);
        await resumed.ReadEventAsync("subscribed");
        var after = (await resumed.ReadEventAsync("message")).Json;

        Assert.Equal((3L, """{"c":3}"""), (after.GetProperty("messageId").GetInt64(), after.Text()));
    }

    [Fact]
    public async Task AWebSocketSubscribeFrameTakesTheStateCursor()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _, _) = await CreateStateTopicAsync(client);
        var plain = await client.CreateTopicAsync();
        await PatchAsync(client, topic, """{"a":1}""");

        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={plain}");
        await socket.ReceiveAsync("subscribed");
        await socket.SendAsync($$"""{"type":"subscribe","topics":"{{topic}}:state"}""");
        var subscribed = await socket.ReceiveAsync("subscribed");
        var notice = (await socket.ReceiveAsync("notice")).GetProperty("notice");
        await PatchAsync(client, topic, """{"a":2}""");
        var message = (await socket.ReceiveAsync("message")).GetProperty("message");

        Assert.Equal(("state", 1L, """{"a":1}"""), (notice.GetProperty("type").GetString(), notice.GetProperty("version").GetInt64(), notice.GetProperty("document").GetRawText()));
        Assert.Equal(2L, message.GetProperty("messageId").GetInt64());
        Assert.Contains(subscribed.GetProperty("topics").EnumerateArray(), t => t.GetProperty("topicId").GetInt64() == topic && t.GetProperty("from").GetInt64() == 2);
    }

    [Fact]
    public async Task AWebSocketStateCursorOnATopicWithoutStateIsAProblemNamingTopics()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var plain = await client.CreateTopicAsync();

        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");
        await socket.SendAsync($$"""{"type":"subscribe","id":"s","topics":"{{plain}}:state"}""");
        var problem = (await socket.ReceiveAsync("problem")).GetProperty("problem");

        Assert.Equal(400, problem.GetProperty("status").GetInt32());
        Assert.True(problem.GetProperty("errors").TryGetProperty("topics", out _), problem.ToString());
    }

    private static async Task PatchAsync(HttpClient client, long topic, string patch)
    {
        using var response = await SendAsync(client, HttpMethod.Post, $"topics/{topic}", patch, Patch);
    }
}
