using System.Net;
using System.Text.Json;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Tests.Storage;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// The subscription URL as a Server-Sent Events stream (docs/protocol.md, "Server-Sent Events"), read
/// with HttpClient and an event-stream parser written from the HTML standard.
/// </summary>
public sealed class ServerSentEventsTests
{
    [Fact]
    public async Task AStreamOpensWithItsResolvedCursorsThenSendsEachMessageAsADefaultEventWhoseIdIsTheCursorsAfterIt()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.Streams.ReconnectDelay = TimeSpan.FromSeconds(3));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "before the stream");
        var epoch = await client.EpochAsync(topic);

        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}");
        var open = await stream.ReadEventAsync("subscribed");
        await client.PublishTextAsync(topic, "hello");
        var message = await stream.ReadEventAsync();

        var response = stream.Response;
        Assert.Equal("text/event-stream", response.Content.Headers.ContentType?.MediaType);
        Assert.True(response.Headers.CacheControl?.NoStore, "a stream is never cached");
        Assert.Equal(["no"], response.Headers.GetValues("X-Accel-Buffering"));
        Assert.Equal("retry: 3000", stream.FirstLine);
        Assert.Equal(3000, stream.Retry);
        // Without a cursor the stream starts at the next message (2), and the open event's id fixes that position.
        Assert.Equal($"{topic}:2~{epoch}", open.IdField);
        var opened = Assert.Single(open.Json.GetProperty("topics").EnumerateArray());
        Assert.Equal((topic, epoch, 2L), (opened.GetProperty("topicId").GetInt64(), opened.GetProperty("epoch").GetString(), opened.GetProperty("from").GetInt64()));
        Assert.Equal("message", message.Type);
        Assert.Equal($"{topic}:3~{epoch}", message.IdField);
        Assert.Equal(await client.PolledMessageJsonAsync(topic, 2), message.Data);
        Assert.Equal("hello", message.Json.Text());
    }

    [Fact]
    public async Task IdsTrackEveryTopicAndAGapComesAsANoticeEventWhoseIdIsPastTheGap()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3);
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishTextAsync(a, $"a{i}");
        }
        var (ea, eb) = (await client.EpochAsync(a), await client.EpochAsync(b));
        string Id(long fromA, long fromB) => $"{a}:{fromA}~{ea},{b}:{fromB}~{eb}";

        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={a}:1,{b}");
        var open = await stream.ReadEventAsync("subscribed");
        var gap = await stream.ReadEventAsync("notice");
        var retained = new[] { await stream.ReadEventAsync("message"), await stream.ReadEventAsync("message"), await stream.ReadEventAsync("message") };
        await client.PublishTextAsync(b, "b1");
        var onB = await stream.ReadEventAsync("message");
        await client.PublishTextAsync(a, "a6");
        var onA = await stream.ReadEventAsync("message");

        Assert.Equal(Id(1, 1), open.IdField);
        Assert.Equal([(a, 1L), (b, 1L)], open.Json.GetProperty("topics").EnumerateArray().Select(t => (t.GetProperty("topicId").GetInt64(), t.GetProperty("from").GetInt64())));
        var notice = gap.Json;
        Assert.Equal(("gap", a, ea, 1L, 2L), (notice.GetProperty("type").GetString(), notice.GetProperty("topicId").GetInt64(),
            notice.GetProperty("epoch").GetString(), notice.GetProperty("fromMessageId").GetInt64(), notice.GetProperty("toMessageId").GetInt64()));
        Assert.Equal(Id(3, 1), gap.IdField);
        Assert.Equal(["a3", "a4", "a5"], retained.Select(e => e.Json.Text()));
        Assert.Equal([Id(4, 1), Id(5, 1), Id(6, 1)], retained.Select(e => e.IdField));
        Assert.Equal(("b1", Id(6, 2)), (onB.Json.Text(), onB.IdField));
        Assert.Equal(("a6", Id(7, 2)), (onA.Json.Text(), onA.IdField));
    }

    [Fact]
    public async Task AStreamResumedWithItsLastEventIdGetsExactlyTheMessagesItMissedNoneTwice()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var epoch = await client.EpochAsync(topic);

        string lastId;
        await using (var first = await EventStreamReader.OpenAsync(client, $"topics={topic}"))
        {
            await first.ReadEventAsync("subscribed");
            for (var i = 1; i <= 3; i++)
            {
                await client.PublishTextAsync(topic, $"m{i}");
            }
            Assert.Equal(["m1", "m2", "m3"], [(await first.ReadEventAsync()).Json.Text(), (await first.ReadEventAsync()).Json.Text(), (await first.ReadEventAsync()).Json.Text()]);
            lastId = first.LastEventId;
        }
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 0), WireClient.Bound, "the dropped stream has ended");
        await client.PublishTextAsync(topic, "m4");
        await client.PublishTextAsync(topic, "m5");

        // The same URL (no cursor: it alone would start after m5) and the id the browser kept.
        await using var resumed = await EventStreamReader.OpenAsync(client, $"topics={topic}", lastEventId: lastId);
        var open = await resumed.ReadEventAsync("subscribed");
        var missed = new[] { await resumed.ReadEventAsync(), await resumed.ReadEventAsync() };
        await client.PublishTextAsync(topic, "m6");
        var next = await resumed.ReadEventAsync();

        Assert.Equal($"{topic}:4~{epoch}", lastId);
        Assert.Equal(lastId, open.IdField);
        Assert.Equal(4, Assert.Single(open.Json.GetProperty("topics").EnumerateArray()).GetProperty("from").GetInt64());
        Assert.Equal([("m4", $"{topic}:5~{epoch}"), ("m5", $"{topic}:6~{epoch}")], missed.Select(e => (e.Json.Text(), e.IdField)));
        Assert.Equal(("message", "m6"), (next.Type, next.Json.Text()));
    }

    [Fact]
    public async Task AResumeAfterTheTopicWasCreatedAgainGetsAnEpochResetThenTheNewIncarnationsMessages()
    {
        await using var first = await LaharsubTestServer.StartAsync();
        using var before = first.CreateClient();
        var topic = await before.CreateTopicAsync();
        var oldEpoch = await before.EpochAsync(topic);
        string lastId;
        await using (var stream = await EventStreamReader.OpenAsync(before, $"topics={topic}"))
        {
            await stream.ReadEventAsync("subscribed");
            await before.PublishTextAsync(topic, "old");
            await stream.ReadEventAsync();
            lastId = stream.LastEventId;
            // A restart without persistence: the stream is told to reconnect, and its last id stays the message's.
            var stopping = first.StopAsync();
            await stream.ReadEventAsync("reconnect");
            await stopping.WaitAsync(WireClient.Bound);
            Assert.Equal(lastId, stream.LastEventId);
        }
        await using var second = await LaharsubTestServer.StartAsync(port: first.BaseAddress.Port);
        using var after = second.CreateClient();
        Assert.Equal(topic, await after.CreateTopicAsync());
        var newEpoch = await after.EpochAsync(topic);
        await after.PublishTextAsync(topic, "new1");
        await after.PublishTextAsync(topic, "new2");

        await using var resumed = await EventStreamReader.OpenAsync(after, $"topics={topic}", lastEventId: lastId);
        var open = await resumed.ReadEventAsync("subscribed");
        var reset = await resumed.ReadEventAsync("notice");
        var messages = new[] { await resumed.ReadEventAsync("message"), await resumed.ReadEventAsync("message") };

        Assert.NotEqual(oldEpoch, newEpoch);
        Assert.Equal($"{topic}:2~{oldEpoch}", lastId);
        Assert.Equal(lastId, open.IdField);
        var notice = reset.Json;
        Assert.Equal(("reset", "epochChanged", newEpoch, oldEpoch, 1L, 2L),
            (notice.GetProperty("type").GetString(), notice.GetProperty("reason").GetString(), notice.GetProperty("epoch").GetString(),
             notice.GetProperty("requestedEpoch").GetString(), notice.GetProperty("firstMessageId").GetInt64(), notice.GetProperty("lastMessageId").GetInt64()));
        Assert.Equal($"{topic}:1~{newEpoch}", reset.IdField);
        Assert.Equal([("new1", $"{topic}:2~{newEpoch}"), ("new2", $"{topic}:3~{newEpoch}")], messages.Select(e => (e.Json.Text(), e.IdField)));
    }

    [Fact]
    public async Task ATopicDeletedWhileStreamingIsToldOnceAndTheStreamGoesOnForTheOthers()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        var (ea, eb) = (await client.EpochAsync(a), await client.EpochAsync(b));
        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={a},{b}");
        await stream.ReadEventAsync("subscribed");

        using (var deleted = await client.DeleteAsync($"topics/{b}").WaitAsync(WireClient.Bound))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }
        var notice = await stream.ReadEventAsync("notice");
        await client.PublishTextAsync(a, "a1");
        await client.PublishTextAsync(a, "a2");
        var after = new[] { await stream.ReadEventAsync(), await stream.ReadEventAsync() };

        Assert.Equal(("topicDeleted", b, eb), (notice.Json.GetProperty("type").GetString(), notice.Json.GetProperty("topicId").GetInt64(), notice.Json.GetProperty("epoch").GetString()));
        // The deleted topic leaves the id: a reconnect will not name it.
        Assert.Equal($"{a}:1~{ea}", notice.IdField);
        Assert.Equal([("message", "a1", $"{a}:2~{ea}"), ("message", "a2", $"{a}:3~{ea}")], after.Select(e => (e.Type, e.Json.Text(), e.IdField)));
    }

    [Fact]
    public async Task AResumeWhoseLastEventIdLeftOutADeletedTopicStreamsTheRestWithoutIt()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        var ea = await client.EpochAsync(a);
        string lastId;
        await using (var stream = await EventStreamReader.OpenAsync(client, $"topics={a},{b}"))
        {
            await stream.ReadEventAsync("subscribed");
            using (await client.DeleteAsync($"topics/{b}").WaitAsync(WireClient.Bound))
            {
            }
            await stream.ReadEventAsync("notice");
            lastId = stream.LastEventId;
        }
        await client.PublishTextAsync(a, "a1");

        // The query still names the deleted topic, as the browser's EventSource URL does.
        await using var resumed = await EventStreamReader.OpenAsync(client, $"topics={a},{b}", lastEventId: lastId);
        var open = await resumed.ReadEventAsync("subscribed");
        var message = await resumed.ReadEventAsync();

        Assert.Equal($"{a}:1~{ea}", lastId);
        Assert.Equal(lastId, open.IdField);
        Assert.Equal([a], open.Json.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()));
        Assert.Equal(("message", "a1", $"{a}:2~{ea}"), (message.Type, message.Json.Text(), message.IdField));
    }

    [Fact]
    public async Task AQuietStreamWritesAHeartbeatCommentEveryHeartbeatIntervalOfTheServersClock()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(o => o.Streams.HeartbeatInterval = TimeSpan.FromSeconds(15),
            s => s.AddSingleton<TimeProvider>(clock));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}");
        await stream.ReadEventAsync("subscribed");

        // Just short of the interval: what comes next is the message, not a heartbeat.
        clock.Advance(TimeSpan.FromSeconds(15) - TimeSpan.FromMilliseconds(1));
        await client.PublishTextAsync(topic, "m1");
        var m1 = await stream.NextAsync();
        clock.Advance(TimeSpan.FromMilliseconds(1));
        var heartbeat = await stream.NextAsync();
        // Once m2 is read, the server has counted the next interval from the heartbeat.
        await client.PublishTextAsync(topic, "m2");
        var m2 = await stream.NextAsync();
        clock.Advance(TimeSpan.FromSeconds(15) - TimeSpan.FromMilliseconds(1));
        await client.PublishTextAsync(topic, "m3");
        var m3 = await stream.NextAsync();
        clock.Advance(TimeSpan.FromMilliseconds(1));
        var second = await stream.NextAsync();

        Assert.Equal("m1", Assert.IsType<ServerSentEvent>(m1).Json.Text());
        Assert.Equal(new EventStreamComment("heartbeat"), heartbeat);
        Assert.Equal("m2", Assert.IsType<ServerSentEvent>(m2).Json.Text());
        Assert.Equal("m3", Assert.IsType<ServerSentEvent>(m3).Json.Text());
        Assert.Equal(new EventStreamComment("heartbeat"), second);
        Assert.Equal(["heartbeat", "heartbeat"], stream.Comments);
    }

    [Fact]
    public async Task AServerThatStopsTellsTheStreamToReconnectThenEndsItKeepingTheLastIdToResumeFrom()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}");
        await stream.ReadEventAsync("subscribed");
        await client.PublishTextAsync(topic, "m1");
        var message = await stream.ReadEventAsync();

        var stopping = server.StopAsync();
        var reconnect = await stream.ReadEventAsync();
        var rest = await stream.ReadToEndAsync();
        await stopping.WaitAsync(WireClient.Bound);

        Assert.Equal("reconnect", reconnect.Type);
        Assert.Equal("stopping", reconnect.Json.GetProperty("reason").GetString());
        Assert.Contains("reconnect", reconnect.Json.GetProperty("detail").GetString());
        // It carries no id of its own: the browser resumes from the message's.
        Assert.Null(reconnect.IdField);
        Assert.Equal(message.IdField, stream.LastEventId);
        Assert.Empty(rest);
    }

    [Fact]
    public async Task ALastEventIdNamingATopicTheQueryDoesNotIsRefused400NamingIt()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();

        using var response = await EventStreamReader.RequestAsync(client, $"topics={a}", lastEventId: $"{a}:1,{b}:1");

        var problem = await ProblemAsync(response, HttpStatusCode.BadRequest);
        var errors = problem.GetProperty("errors").GetProperty("Last-Event-ID");
        Assert.Contains($"topic {b}", errors[0].GetString());
    }

    [Theory]
    [InlineData("abc")]
    [InlineData("{0}:x")]
    [InlineData("{0}:1~not-an-epoch!")]
    [InlineData("{0}:1,{0}:2")]
    public async Task AMalformedLastEventIdIsRefused400NamingIt(string lastEventId)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        using var response = await EventStreamReader.RequestAsync(client, $"topics={topic}", lastEventId: string.Format(lastEventId, topic));

        var problem = await ProblemAsync(response, HttpStatusCode.BadRequest);
        Assert.Equal(JsonValueKind.Array, problem.GetProperty("errors").GetProperty("Last-Event-ID").ValueKind);
    }

    [Fact]
    public async Task AnEmptyLastEventIdResumesNothingAndTheQuerysCursorsStand()
    {
        // What a stream's id becomes once every topic was deleted; the standard's EventSource would not send it,
        // other clients may.
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "m1");

        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}:1", lastEventId: "");
        var open = await stream.ReadEventAsync("subscribed");
        var message = await stream.ReadEventAsync();

        Assert.Equal(1, Assert.Single(open.Json.GetProperty("topics").EnumerateArray()).GetProperty("from").GetInt64());
        Assert.Equal("m1", message.Json.Text());
    }

    [Fact]
    public async Task AnUnknownTopicIsAnswered404WithAProblemBeforeAnyEvent()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        using var response = await EventStreamReader.RequestAsync(client, $"topics={topic},999");

        var problem = await ProblemAsync(response, HttpStatusCode.NotFound);
        Assert.Equal(999, problem.GetProperty("topicId").GetInt64());
    }

    [Fact]
    public async Task AStreamOnOneInstanceGetsAnothersPublishesAndResumesOnThatOtherExactly()
    {
        var redis = await SharedRedis.GetAsync();
        var prefix = SharedRedis.UniquePrefix();
        void OnRedis(IServiceCollection services) => services.AddLaharsub().AddRedis(o => { o.Configuration = redis.Configuration; o.KeyPrefix = prefix; });
        await using var a = await LaharsubTestServer.StartAsync(services: OnRedis);
        await using var b = await LaharsubTestServer.StartAsync(services: OnRedis);
        using var atA = a.CreateClient();
        using var atB = b.CreateClient();
        var topic = await atA.CreateTopicAsync();
        var epoch = await atA.EpochAsync(topic);

        string lastId;
        await using (var onB = await EventStreamReader.OpenAsync(atB, $"topics={topic}"))
        {
            await onB.ReadEventAsync("subscribed");
            for (var i = 1; i <= 3; i++)
            {
                await atA.PublishTextAsync(topic, $"m{i}");
            }
            Assert.Equal(["m1", "m2"], [(await onB.ReadEventAsync()).Json.Text(), (await onB.ReadEventAsync()).Json.Text()]);
            lastId = onB.LastEventId;
        }
        await atA.PublishTextAsync(topic, "m4");

        await using var onA = await EventStreamReader.OpenAsync(atA, $"topics={topic}", lastEventId: lastId);
        await onA.ReadEventAsync("subscribed");
        var rest = new[] { await onA.ReadEventAsync(), await onA.ReadEventAsync() };
        await atB.PublishTextAsync(topic, "m5");
        var next = await onA.ReadEventAsync();

        Assert.Equal($"{topic}:3~{epoch}", lastId);
        Assert.Equal([("m3", $"{topic}:4~{epoch}"), ("m4", $"{topic}:5~{epoch}")], rest.Select(e => (e.Json.Text(), e.IdField)));
        Assert.Equal(("m5", $"{topic}:6~{epoch}"), (next.Json.Text(), next.IdField));
    }

    private static async Task<JsonElement> ProblemAsync(HttpResponseMessage response, HttpStatusCode expected)
    {
        var text = await response.Content.ReadAsStringAsync().WaitAsync(WireClient.Bound);
        Assert.True(response.StatusCode == expected, $"expected {(int)expected}, got {(int)response.StatusCode}: {text}");
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        var problem = JsonDocument.Parse(text).RootElement.Clone();
        Assert.Equal((int)expected, problem.GetProperty("status").GetInt32());
        return problem;
    }
}
