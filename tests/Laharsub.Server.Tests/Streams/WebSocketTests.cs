using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// The subscription URL as a WebSocket, subprotocol <c>laharsub.v1</c> (docs/protocol.md, "WebSocket"),
/// spoken with .NET's own <see cref="ClientWebSocket"/>.
/// </summary>
public sealed class WebSocketTests
{
    [Fact]
    public async Task ASocketStartsWithASubscribedFrameThenSendsEachMessageAsAMessageFrame()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "m1");
        await client.PublishTextAsync(topic, "m2");
        var epoch = await client.EpochAsync(topic);

        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}:2");
        var subscribed = await socket.ReceiveAsync("subscribed");
        var retained = await socket.ReceiveAsync("message");
        await client.PublishTextAsync(topic, "m3");
        var published = await socket.ReceiveAsync("message");

        Assert.Equal(LaharsubSocket.SubProtocol, socket.Socket.SubProtocol);
        Assert.False(subscribed.TryGetProperty("id", out _), "the first subscribed frame answers no frame of the client's");
        var position = Assert.Single(subscribed.GetProperty("topics").EnumerateArray());
        Assert.Equal((topic, epoch, 2L), (position.GetProperty("topicId").GetInt64(), position.GetProperty("epoch").GetString(), position.GetProperty("from").GetInt64()));
        Assert.Equal(await client.PolledMessageJsonAsync(topic, 2), retained.GetProperty("message").GetRawText());
        Assert.Equal(("m3", 3L), (published.GetProperty("message").Text(), published.GetProperty("message").GetProperty("messageId").GetInt64()));
    }

    [Fact]
    public async Task APublishFrameIsAnsweredPublishedWithItsIdAndReachesTheSocketItselfAndALongPoll()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var epoch = await client.EpochAsync(topic);
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}");
        await socket.ReceiveAsync("subscribed");
        var poll = client.PollAsync($"topics={topic}:1&timeout=30");
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 2), WireClient.Bound, "the socket and the poll wait");

        await socket.SendAsync($$"""{"type":"publish","id":"c2","topicId":{{topic}},"contentType":"text/plain","body":"hi","encoding":"text"}""");
        // The answer and the delivery race each other: either may come first.
        var frames = new[] { await socket.ReceiveAsync(), await socket.ReceiveAsync() };
        var polled = await poll.WaitAsync(WireClient.Bound);
        await socket.SendAsync($$"""{"type":"publish","id":"c3","topicId":{{topic}},"body":"AAH/","encoding":"base64","ifEpoch":"{{epoch}}"}""");
        var binary = new[] { await socket.ReceiveAsync(), await socket.ReceiveAsync() };

        var answer = Assert.Single(frames, f => f.GetProperty("type").GetString() == "published");
        Assert.Equal(("c2", topic, 1L, epoch), (answer.GetProperty("id").GetString(), answer.GetProperty("topicId").GetInt64(),
            answer.GetProperty("messageId").GetInt64(), answer.GetProperty("epoch").GetString()));
        var delivered = Assert.Single(frames, f => f.GetProperty("type").GetString() == "message").GetProperty("message");
        Assert.Equal(("hi", "text/plain", 1L), (delivered.Text(), delivered.GetProperty("contentType").GetString(), delivered.GetProperty("messageId").GetInt64()));
        var fromPoll = Assert.Single(polled.Messages);
        Assert.Equal(("hi", "text/plain", 1L), (fromPoll.Text, fromPoll.ContentType, fromPoll.MessageId));
        Assert.Equal(("c3", 2L), (binary.Single(f => f.GetProperty("type").GetString() == "published").GetProperty("id").GetString(),
            binary.Single(f => f.GetProperty("type").GetString() == "published").GetProperty("messageId").GetInt64()));
        var stored = Assert.Single((await client.PollAsync($"topics={topic}:2&timeout=0")).Messages);
        Assert.Equal(new byte[] { 0, 1, 255 }, stored.Body);
        Assert.Equal("application/octet-stream", stored.ContentType);
    }

    [Fact]
    public async Task APublishFrameToAMissingTopicIsAnswered404WithItsId()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync("""{"type":"publish","id":"p1","topicId":4242,"body":"x"}""");
        var problem = await socket.ReceiveAsync("problem");

        Assert.Equal("p1", problem.GetProperty("id").GetString());
        Assert.Equal(404, problem.GetProperty("problem").GetProperty("status").GetInt32());
        Assert.Equal(4242, problem.GetProperty("problem").GetProperty("topicId").GetInt64());
        Assert.Equal(0, (await server.Store.GetStatisticsAsync()).TopicCount);
    }

    [Fact]
    public async Task AFrameThatIsNotJsonClosesTheSocketWith4000AndAReason()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync("subscribe me please");
        var (status, reason, before) = await socket.ReceiveCloseAsync();

        Assert.Equal(4000, (int?)status);
        Assert.Contains("not JSON", reason);
        Assert.Empty(before);
    }

    [Fact]
    public async Task ABinaryFrameClosesTheSocketWith4000AndAReason()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync(Encoding.UTF8.GetBytes("""{"type":"subscribe","topics":"1"}"""), WebSocketMessageType.Binary);
        var (status, reason, before) = await socket.ReceiveCloseAsync();

        Assert.Equal(4000, (int?)status);
        Assert.Contains("binary", reason);
        Assert.Empty(before);
    }

    /// <summary>
    /// A lone surrogate escape is JSON, but not text: the frame is a problem naming the field (without echoing an
    /// id that is not text), nothing changes, and the socket goes on. A property name that is not text names no
    /// field, and is ignored as unknown properties are.
    /// </summary>
    [Theory]
    [InlineData("""{"type":"subscribe","id":"\ud800","topics":"{topic}"}""", "id")]
    [InlineData("""{"type":"subscr\udc00ibe","id":"f","topics":"{topic}"}""", "type")]
    [InlineData("""{"type":"subscribe","id":"f","topics":"{topic}\udc00\ud800"}""", "topics")]
    [InlineData("""{"type":"publish","id":"f","topicId":{topic},"body":"hi\ud83d"}""", "body")]
    [InlineData("""{"type":"publish","id":"f","topicId":{topic},"body":"hi","\ud800":1}""", null)]
    public async Task AFrameWithTextThatIsNotUnicodeIsAProblemNamingTheFieldAndTheSocketGoesOn(string frame, string? field)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync(frame.Replace("{topic}", $"{topic}"));
        var answer = await socket.ReceiveAsync();
        await socket.SendAsync($$"""{"type":"subscribe","id":"next","topics":"{{topic}}"}""");
        var next = await socket.ReceiveAsync("subscribed");

        if (field is null)
        {
            Assert.Equal("published", answer.GetProperty("type").GetString());
            Assert.Equal(1, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
        }
        else
        {
            Assert.Equal("problem", answer.GetProperty("type").GetString());
            Assert.Equal(400, answer.GetProperty("problem").GetProperty("status").GetInt32());
            Assert.Contains("not Unicode", answer.GetProperty("problem").GetProperty("errors").GetProperty(field)[0].GetString());
            Assert.Equal(field == "id" ? null : "f", answer.TryGetProperty("id", out var id) ? id.GetString() : null);
            Assert.Equal(0, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
        }
        Assert.Equal("next", next.GetProperty("id").GetString());
    }

    [Fact]
    public async Task AFrameOfAnUnknownTypeIsAnsweredWithAProblemNamingTypeAndTheSocketGoesOn()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync("""{"type":"subscribe-all","id":"x1"}""");
        var problem = await socket.ReceiveAsync("problem");
        await client.PublishTextAsync(topic, "still here");
        var message = await socket.ReceiveAsync("message");

        Assert.Equal("x1", problem.GetProperty("id").GetString());
        Assert.Equal(400, problem.GetProperty("problem").GetProperty("status").GetInt32());
        Assert.Contains("subscribe-all", problem.GetProperty("problem").GetProperty("errors").GetProperty("type")[0].GetString());
        Assert.Equal("still here", message.GetProperty("message").Text());
    }

    [Theory]
    [InlineData("""{"type":"publish","id":"b1","topicId":{0},"body":"x","encoding":"rot13"}""", "encoding")]
    [InlineData("""{"type":"publish","id":"b1","topicId":{0},"body":"not base64!","encoding":"base64"}""", "body")]
    [InlineData("""{"type":"publish","id":"b1","topicId":{0},"encoding":"text"}""", "body")]
    [InlineData("""{"type":"publish","id":"b1","topicId":{0},"body":""}""", "body")]
    [InlineData("""{"type":"publish","id":"b1","topicId":{0},"body":"x","contentType":"text/plain\u0001"}""", "contentType")]
    [InlineData("""{"type":"publish","id":"b1","topicId":{0},"body":"x","contentType":"*/*"}""", "contentType")]
    [InlineData("""{"type":"publish","id":"b1","topicId":{0},"body":"x","contentType":"text/*"}""", "contentType")]
    [InlineData("""{"type":"publish","id":"b1","topicId":{0},"body":"x","ifEpoch":"not an epoch"}""", "ifEpoch")]
    [InlineData("""{"type":"publish","id":"b1","topicId":"{0}x","body":"x"}""", "topicId")]
    [InlineData("""{"type":"publish","id":"b1","topicId":-{0},"body":"x"}""", "topicId")]
    public async Task APublishFrameWithABadFieldIsAnsweredWithAProblemNamingItAndStoresNothing(string frame, string field)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync(frame.Replace("{0}", topic.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        var problem = await socket.ReceiveAsync("problem");
        var afterRefusal = (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64();
        // The socket goes on: a good publish is stored as the topic's first message.
        await socket.SendAsync($$"""{"type":"publish","id":"g1","topicId":{{topic}},"body":"good"}""");
        var published = await socket.ReceiveAsync("published");

        Assert.Equal("b1", problem.GetProperty("id").GetString());
        Assert.Equal(400, problem.GetProperty("problem").GetProperty("status").GetInt32());
        Assert.True(problem.GetProperty("problem").GetProperty("errors").TryGetProperty(field, out _), $"the problem names {field}: {problem.GetRawText()}");
        Assert.Equal(0, afterRefusal);
        Assert.Equal(("g1", 1L), (published.GetProperty("id").GetString(), published.GetProperty("messageId").GetInt64()));
    }

    [Fact]
    public async Task SubscribeAddsATopicAndUnsubscribeRemovesItEachAnsweredWithTheSocketsSubscriptions()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        var (ea, eb) = (await client.EpochAsync(a), await client.EpochAsync(b));
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={a}");
        await socket.ReceiveAsync("subscribed");
        await client.PublishTextAsync(a, "a1");
        await socket.ReceiveAsync("message");

        await socket.SendAsync($$"""{"type":"subscribe","id":"s1","topics":"{{b}}"}""");
        var both = await socket.ReceiveAsync("subscribed");
        await client.PublishTextAsync(b, "b1");
        var onB = await socket.ReceiveAsync("message");
        await socket.SendAsync($$"""{"type":"unsubscribe","id":"u1","topics":"{{b}}"}""");
        var onlyA = await socket.ReceiveAsync("subscribed");
        await client.PublishTextAsync(b, "b2 after unsubscribe");
        await client.PublishTextAsync(a, "a2");
        await client.PublishTextAsync(a, "a3");
        // Had the socket still followed b, b2 (published first) would come no later than a3.
        var after = new[] { await socket.ReceiveAsync(), await socket.ReceiveAsync() };

        Assert.Equal("s1", both.GetProperty("id").GetString());
        Assert.Equal([(a, ea, 2L), (b, eb, 1L)], Positions(both));
        Assert.Equal("b1", onB.GetProperty("message").Text());
        Assert.Equal("u1", onlyA.GetProperty("id").GetString());
        Assert.Equal([(a, ea, 2L)], Positions(onlyA));
        Assert.Equal(["a2", "a3"], after.Select(f => f.GetProperty("message").Text()));
    }

    [Fact]
    public async Task SubscribeWithACursorRepositionsATopicTheSocketAlreadyFollows()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}");
        await socket.ReceiveAsync("subscribed");
        await client.PublishTextAsync(topic, "m1");
        await client.PublishTextAsync(topic, "m2");
        Assert.Equal(["m1", "m2"], [(await socket.ReceiveAsync("message")).GetProperty("message").Text(), (await socket.ReceiveAsync("message")).GetProperty("message").Text()]);

        await socket.SendAsync($$"""{"type":"subscribe","id":"again","topics":"{{topic}}:1"}""");
        var subscribed = await socket.ReceiveAsync("subscribed");
        var replayed = new[] { await socket.ReceiveAsync("message"), await socket.ReceiveAsync("message") };

        Assert.Equal("again", subscribed.GetProperty("id").GetString());
        Assert.Equal(1, Assert.Single(subscribed.GetProperty("topics").EnumerateArray()).GetProperty("from").GetInt64());
        Assert.Equal(["m1", "m2"], replayed.Select(f => f.GetProperty("message").Text()));
    }

    [Fact]
    public async Task SubscribingToAMissingTopicIsAnswered404WithItsIdAndTheSocketGoesOnWithItsOtherTopics()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync("""{"type":"subscribe","id":"s9","topics":"9999"}""");
        var problem = await socket.ReceiveAsync("problem");
        var subscribed = await socket.ReceiveAsync("subscribed");
        await client.PublishTextAsync(topic, "m1");
        var message = await socket.ReceiveAsync("message");

        Assert.Equal("s9", problem.GetProperty("id").GetString());
        Assert.Equal((404, 9999L), (problem.GetProperty("problem").GetProperty("status").GetInt32(), problem.GetProperty("problem").GetProperty("topicId").GetInt64()));
        Assert.Equal([topic], subscribed.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()));
        Assert.Equal("m1", message.GetProperty("message").Text());
    }

    [Fact]
    public async Task ASocketOpenedWithoutTopicsStartsEmptyAndFollowsWhatItSubscribesTo()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "m1");

        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        var empty = await socket.ReceiveAsync("subscribed");
        await socket.SendAsync($$"""{"type":"subscribe","id":"first","topics":"{{topic}}:1"}""");
        var subscribed = await socket.ReceiveAsync("subscribed");
        var message = await socket.ReceiveAsync("message");

        Assert.Equal(0, empty.GetProperty("topics").GetArrayLength());
        Assert.Equal("first", subscribed.GetProperty("id").GetString());
        Assert.Equal([(topic, await client.EpochAsync(topic), 1L)], Positions(subscribed));
        Assert.Equal("m1", message.GetProperty("message").Text());
    }

    [Fact]
    public async Task AServerThatStopsClosesTheSocketWith1001AndAReason()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}");
        await socket.ReceiveAsync("subscribed");

        var stopping = server.StopAsync();
        var (status, reason, before) = await socket.ReceiveCloseAsync();
        await stopping.WaitAsync(WireClient.Bound);

        Assert.Equal(WebSocketCloseStatus.EndpointUnavailable, status);
        Assert.Contains("reconnect", reason);
        Assert.Empty(before);
    }

    private static IEnumerable<(long TopicId, string Epoch, long From)> Positions(JsonElement subscribed) =>
        subscribed.GetProperty("topics").EnumerateArray()
            .Select(t => (t.GetProperty("topicId").GetInt64(), t.GetProperty("epoch").GetString()!, t.GetProperty("from").GetInt64()));
}
