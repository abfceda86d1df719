using System.Net;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// Conflation the subscriber asks for (docs/protocol.md, "Conflation"): <c>latest=true</c> and
/// <c>conflate=N</c>, the <c>conflated</c> notice that announces what was skipped, over the long poll,
/// SSE and the WebSocket; and the streams' batching window.
/// </summary>
public sealed class ConflationTests
{
    /// <summary>
    /// Published, cursor, then the conflated range expected (0 for no notice) and the message delivered.
    /// With MaxMessagesPerPoll 2 and two topics each topic's share is one message, so a topic more than one
    /// behind is read again from its latest.
    /// </summary>
    [Theory]
    [InlineData(5, 1, 1, 4, 5)]
    [InlineData(5, 3, 3, 4, 5)]
    [InlineData(5, 4, 4, 4, 5)]
    [InlineData(5, 5, 0, 0, 5)]
    [InlineData(1, 1, 0, 0, 1)]
    public async Task CatchingUpWithLatestSkipsToEachTopicsLatestMessageAndAnnouncesTheRange(int published, long from, long skippedFrom, long skippedTo, long delivered)
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerPoll = 2);
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        for (var i = 1; i <= published; i++)
        {
            await client.PublishTextAsync(a, $"a{i}");
            await client.PublishTextAsync(b, $"b{i}");
        }

        foreach (var format in new[] { "application/json", "multipart/mixed" })
        {
            var response = await client.PollAsync($"topics={a}:{from},{b}:{from}&latest=true&timeout=0", format);

            Assert.Equal(HttpStatusCode.OK, response.Status);
            Assert.Equal([(a, delivered), (b, delivered)], response.Messages.Select(m => (m.TopicId, m.MessageId)));
            var expected = skippedFrom == 0 ? [] : new[] { (a, skippedFrom, skippedTo), (b, skippedFrom, skippedTo) };
            Assert.Equal(expected, response.Notices.Select(n => (n.TopicId, n.Get("fromMessageId"), n.Get("toMessageId"))));
            Assert.All(response.Notices, n => Assert.Equal("conflated", n.Type));
        }
    }

    [Fact]
    public async Task AGapAndAConflatedRangeAreTwoNotices()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        for (var i = 1; i <= 6; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }

        var response = await client.PollAsync($"topics={topic}:1&latest=true&timeout=0");

        // 1..3 are lost (retention), 4..5 skipped by choice: the client can tell the two apart.
        Assert.Equal([("gap", 1L, 3L), ("conflated", 4L, 5L)], response.Notices.Select(n => (n.Type, n.Get("fromMessageId"), n.Get("toMessageId"))));
        Assert.Equal("m6", Assert.Single(response.Messages).Text);
    }

    [Fact]
    public async Task LatestConflatesOnlyTheFirstReadAfterThatEveryMessageComes()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "old");
        await client.PublishTextAsync(topic, "latest");

        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}:1&latest=true");
        await socket.ReceiveAsync("subscribed");
        var notice = (await socket.ReceiveAsync("notice")).GetProperty("notice");
        var first = await socket.ReceiveAsync("message");
        await client.PublishTextAsync(topic, "new 1");
        await client.PublishTextAsync(topic, "new 2");
        var next = new[] { await socket.ReceiveAsync("message"), await socket.ReceiveAsync("message") };

        Assert.Equal(("conflated", 1L, 1L), (notice.GetProperty("type").GetString(), notice.GetProperty("fromMessageId").GetInt64(), notice.GetProperty("toMessageId").GetInt64()));
        Assert.Equal(2, first.GetProperty("message").GetProperty("messageId").GetInt64());
        Assert.Equal([3L, 4L], next.Select(m => m.GetProperty("message").GetProperty("messageId").GetInt64()));
    }

    [Fact]
    public async Task AConflatedPollAnswersNoSoonerThanItsIntervalAfterItArrivedWithTheLatest()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        for (var i = 1; i <= 3; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }

        var poll = client.PollAsync($"topics={topic}:1&conflate=250&timeout=30");
        var advanced = await AdvanceUntilAsync(clock, poll, TimeSpan.FromMilliseconds(50));
        var response = await poll;

        // Held although its messages were there: the interval counts from the poll's arrival.
        Assert.True(advanced >= TimeSpan.FromMilliseconds(250), $"answered after {advanced.TotalMilliseconds} ms of the server's clock");
        Assert.Equal([("conflated", 1L, 2L)], response.Notices.Select(n => (n.Type, n.Get("fromMessageId"), n.Get("toMessageId"))));
        Assert.Equal("m3", Assert.Single(response.Messages).Text);
    }

    [Fact]
    public async Task AConflatedStreamSendsAtMostOneMessagePerTopicPerIntervalTheLatest()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}&conflate=250");
        await stream.ReadEventAsync("subscribed");
        await client.PublishTextAsync(topic, "m1");
        // The first delivery goes at once; the interval runs from it, on the server's clock, which stands still.
        Assert.Equal(1, (await stream.ReadEventAsync("message")).Json.GetProperty("messageId").GetInt64());
        for (var i = 2; i <= 4; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }
        var next = stream.ReadEventAsync();
        var advanced = await AdvanceUntilAsync(clock, next, TimeSpan.FromMilliseconds(50));
        var notice = await next;
        var latest = await stream.ReadEventAsync("message");

        Assert.True(advanced >= TimeSpan.FromMilliseconds(250), $"sent after {advanced.TotalMilliseconds} ms of the server's clock");
        Assert.Equal("notice", notice.Type);
        Assert.Equal(("conflated", 2L, 3L), (notice.Json.GetProperty("type").GetString(), notice.Json.GetProperty("fromMessageId").GetInt64(), notice.Json.GetProperty("toMessageId").GetInt64()));
        Assert.Equal(4, latest.Json.GetProperty("messageId").GetInt64());
        // The event ids resume past the skipped range: the notice's id already stands at 4.
        Assert.StartsWith($"{topic}:4~", notice.IdField);
    }

    [Fact]
    public async Task WithABatchWindowAStreamWaitsThatLongAfterAWakeAndSendsEverythingTogether()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(o => o.Streams.BatchWindow = TimeSpan.FromMilliseconds(100),
            services: s => s.AddSingleton<TimeProvider>(clock));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}");
        await stream.ReadEventAsync("subscribed");
        var first = stream.ReadEventAsync("message");
        for (var i = 1; i <= 3; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }
        var advanced = await AdvanceUntilAsync(clock, first, TimeSpan.FromMilliseconds(25));
        var rest = new[] { await first, await stream.ReadEventAsync("message"), await stream.ReadEventAsync("message") };

        Assert.True(advanced >= TimeSpan.FromMilliseconds(100), $"sent after {advanced.TotalMilliseconds} ms of the server's clock");
        Assert.Equal([1L, 2L, 3L], rest.Select(e => e.Json.GetProperty("messageId").GetInt64()));
    }

    [Theory]
    [InlineData("conflate=60001", "conflate")]
    [InlineData("conflate=-1", "conflate")]
    [InlineData("conflate=abc", "conflate")]
    [InlineData("conflate=2.5", "conflate")]
    [InlineData("conflate=", "conflate")]
    [InlineData("conflate=1&conflate=2", "conflate")]
    [InlineData("latest=yes", "latest")]
    [InlineData("latest=1", "latest")]
    [InlineData("latest=true&LATEST=true", "LATEST")]
    public async Task ABadConflationIs400NamingTheParameterOnEveryTransport(string conflation, string parameter)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        foreach (var accept in new[] { "application/json", "text/event-stream" })
        {
            var request = new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&{conflation}&timeout=0");
            request.Headers.Accept.ParseAdd(accept);
            var (status, problem) = await client.SendForProblemAsync(request);

            Assert.Equal(HttpStatusCode.BadRequest, status);
            var errors = problem.GetProperty("errors");
            Assert.True(errors.TryGetProperty(parameter, out var messages), $"expected an error for '{parameter}', got {errors}");
            Assert.False(string.IsNullOrWhiteSpace(messages[0].GetString()));
        }
        Assert.Equal(HttpStatusCode.BadRequest, await LaharsubSocket.RefusedAsync(server.ApiAddress, $"topics={topic}&{conflation}"));
    }

    /// <summary>
    /// Moves the server's clock on by <paramref name="step"/> until <paramref name="task"/> completes,
    /// giving the server a moment of real time to act after each step; returns how far the clock moved.
    /// </summary>
    private static async Task<TimeSpan> AdvanceUntilAsync(FakeTimeProvider clock, Task task, TimeSpan step)
    {
        var advanced = TimeSpan.Zero;
        for (var round = 0; round < 200 && !task.IsCompleted; round++)
        {
            await Task.WhenAny(task, Task.Delay(TimeSpan.FromMilliseconds(50)));
            if (task.IsCompleted)
            {
                break;
            }
            clock.Advance(step);
            advanced += step;
        }
        Assert.True(task.IsCompleted, $"nothing after {advanced.TotalMilliseconds} ms of the server's clock");
        return advanced;
    }
}
