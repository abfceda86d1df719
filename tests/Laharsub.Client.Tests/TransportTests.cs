using System.Threading.Channels;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// Every transport (WebSocket, Server-Sent Events, long polling) against the real server: the same
/// events in the same order, the same notices, cursors, topic changes while running, and resuming.
/// </summary>
public sealed class TransportTests
{
    public static TheoryData<LaharsubTransport> All => [LaharsubTransport.WebSocket, LaharsubTransport.ServerSentEvents, LaharsubTransport.LongPolling];

    /// <summary>Waits until the subscription listens on the server: its stream started, or its poll waits on <paramref name="topic"/>.</summary>
    internal static async Task ListeningAsync(EventReader reader, LaharsubTestServer server, long topic, LaharsubTransport transport)
    {
        _ = reader.PendingStep;
        if (transport == LaharsubTransport.LongPolling)
        {
            await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), TestSupport.Timeout, "the poll waits");
        }
        else
        {
            await Eventually.HoldsAsync(() => Task.FromResult(reader.Subscription.Transport == transport), TestSupport.Timeout, $"the {transport} stream starts");
        }
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task EachTransportDeliversSeveralTopicsInOrderAndTracksTheCursors(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        await using var publisher = server.CreateLaharsubClient();
        var a = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var b = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await publisher.PublishAsync(a, "a1").WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(a, 1), new(b, 1)]));

        Assert.Equal("a1", (await reader.NextAsync()).Text());
        for (var i = 2; i <= 20; i++)
        {
            await publisher.PublishAsync(a, $"a{i}").WaitAsync(TestSupport.Timeout);
            await publisher.PublishAsync(b, $"b{i}").WaitAsync(TestSupport.Timeout);
        }
        var events = await reader.TakeAsync(38);

        Assert.Equal(Enumerable.Range(2, 19).Select(i => $"a{i}"), events.Where(e => e.TopicId == a).Select(e => e.Text()));
        Assert.Equal(Enumerable.Range(2, 19).Select(i => $"b{i}"), events.Where(e => e.TopicId == b).Select(e => e.Text()));
        // b2..b20 are b's messages 1..19.
        Assert.Equal(new Dictionary<long, long> { [a] = 21, [b] = 20 }, reader.Subscription.Cursors.Froms());
        Assert.Equal(transport, reader.Subscription.Transport);
        await reader.AssertQuietForAsync(TimeSpan.FromMilliseconds(200));
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task EachTransportReportsGapsResetsAndUnknownTopicsAndGoesOn(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 2);
        await using var client = server.CreateLaharsubClient(transport);
        var evicted = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        var recreated = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishAsync(evicted.TopicId, $"e{i}").WaitAsync(TestSupport.Timeout);
        }
        await client.PublishAsync(recreated.TopicId, "r1").WaitAsync(TestSupport.Timeout);

        await using var reader = new EventReader(client.Subscribe(new Dictionary<long, TopicCursor>
        {
            [evicted.TopicId] = new(1, evicted.Epoch),
            // A cursor of another incarnation of the topic: the server says so, and starts it over.
            [recreated.TopicId] = new(7, "0123456789abcdef"),
            [999] = new(1),
        }));
        var events = await reader.TakeAsync(6);

        var notFound = Assert.IsType<TopicNotFoundNotice>(Assert.Single(events, e => e.TopicId == 999));
        Assert.Contains("Topic 999 does not exist", notFound.Detail);
        var ofEvicted = events.Where(e => e.TopicId == evicted.TopicId).ToList();
        var gap = Assert.IsType<GapNotice>(ofEvicted[0]);
        Assert.Equal((1L, 3L), (gap.FromMessageId, gap.ToMessageId));
        Assert.Equal(["e4", "e5"], ofEvicted.Skip(1).Select(e => e.Text()));
        var ofRecreated = events.Where(e => e.TopicId == recreated.TopicId).ToList();
        var reset = Assert.IsType<ResetNotice>(ofRecreated[0]);
        Assert.True(reset.EpochChanged);
        Assert.Equal((recreated.Epoch, "0123456789abcdef", 7L, 1L), (reset.Epoch, reset.RequestedEpoch, reset.RequestedFrom, reset.FirstMessageId));
        Assert.Equal("r1", ofRecreated[1].Text());
        Assert.Equal(new Dictionary<long, TopicCursor> { [evicted.TopicId] = new(6, evicted.Epoch), [recreated.TopicId] = new(2, recreated.Epoch) }, reader.Subscription.Cursors);
        await client.PublishAsync(recreated.TopicId, "r2").WaitAsync(TestSupport.Timeout);
        Assert.Equal("r2", (await reader.NextAsync()).Text());
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task EachTransportReportsATopicDeletedWhileItRunsAndGoesOn(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        var deleted = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var kept = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(deleted, 1), new(kept, 1)]));
        await ListeningAsync(reader, server, deleted, transport);

        await client.DeleteTopicAsync(deleted).WaitAsync(TestSupport.Timeout);
        var notice = Assert.IsType<TopicDeletedNotice>(await reader.NextAsync());
        await client.PublishAsync(kept, "still here").WaitAsync(TestSupport.Timeout);

        Assert.Equal(deleted, notice.TopicId);
        Assert.Equal("still here", (await reader.NextAsync()).Text());
        Assert.Equal([kept], reader.Subscription.Cursors.Keys);
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task TopicsAddedMovedAndRemovedWhileRunningNeitherLoseNorRepeatAnything(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options(transport: transport));
        await using var publisher = server.CreateLaharsubClient();
        var a = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var b = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await publisher.PublishAsync(a, "a1").WaitAsync(TestSupport.Timeout);
        await publisher.PublishAsync(b, "b1").WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(a, 1)]));
        Assert.Equal("a1", (await reader.NextAsync()).Text());
        await ListeningAsync(reader, server, a, transport);
        var connections = handler.Requests;

        reader.Subscription.Add(b, 1);
        Assert.Equal("b1", (await reader.NextAsync()).Text());
        Assert.True(reader.Subscription.Remove(a));
        await publisher.PublishAsync(a, "a2, unwanted").WaitAsync(TestSupport.Timeout);
        for (var i = 2; i <= 6; i++)
        {
            await publisher.PublishAsync(b, $"b{i}").WaitAsync(TestSupport.Timeout);
        }
        Assert.Equal("b2", (await reader.NextAsync()).Text());
        // b3..b6 are on their way (received, or in the same answer) when the caller moves b back to its
        // start: it asked for b1 again, and gets b1..b6, each once, in order; nothing of the old position.
        reader.Subscription.Add(b, 1);
        var again = (await reader.TakeAsync(6)).Select(e => e.Text()).ToList();
        reader.Subscription.Add(999, 1);
        var notFound = await reader.NextAsync();
        await publisher.PublishAsync(b, "b7").WaitAsync(TestSupport.Timeout);
        var next = await reader.NextAsync();

        Assert.Equal(["b1", "b2", "b3", "b4", "b5", "b6"], again);
        Assert.Equal(999, Assert.IsType<TopicNotFoundNotice>(notFound).TopicId);
        Assert.Equal("b7", next.Text());
        Assert.Equal(new Dictionary<long, long> { [b] = 8 }, reader.Subscription.Cursors.Froms());
        await reader.AssertQuietForAsync(TimeSpan.FromMilliseconds(200));
        if (transport == LaharsubTransport.WebSocket)
        {
            // The changes went as frames on the one socket: no request since it opened.
            Assert.Equal(connections, handler.Requests);
        }
        else
        {
            Assert.True(handler.Requests > connections, "an event stream is opened again, a poll sent again, with the new topics");
        }
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task SavedCursorsResumeExactlyAfterTheLastEventReadOnEachTransport(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        var a = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var b = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishAsync(a, $"a{i}").WaitAsync(TestSupport.Timeout);
            await client.PublishAsync(b, $"b{i}").WaitAsync(TestSupport.Timeout);
        }

        IReadOnlyDictionary<long, TopicCursor> saved;
        List<string> firstRun;
        await using (var reader = new EventReader(client.Subscribe([new(a, 1), new(b, 1)])))
        {
            firstRun = (await reader.TakeAsync(7)).Select(e => e.Text()).ToList();
            saved = reader.Subscription.Cursors;
        }
        await using var resumed = new EventReader(client.Subscribe(saved));
        var secondRun = (await resumed.TakeAsync(3)).Select(e => e.Text()).ToList();

        Assert.Equal(["a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4", "b5"], firstRun.Concat(secondRun).Order());
        Assert.Equal(new Dictionary<long, long> { [a] = 6, [b] = 6 }, resumed.Subscription.Cursors.Froms());
        Assert.All(resumed.Subscription.Cursors.Values, cursor => Assert.NotNull(cursor.Epoch));
        await resumed.AssertQuietForAsync(TimeSpan.FromMilliseconds(200));
    }

    [Theory]
    [InlineData(LaharsubTransport.WebSocket)]
    [InlineData(LaharsubTransport.ServerSentEvents)]
    public async Task AServerRestartMidStreamIsResumedFromTheCursorsWithoutLossOrRepeats(LaharsubTransport transport)
    {
        await using var first = await LaharsubTestServer.StartAsync();
        var backend = first.Store;
        var keepData = LaharsubTestServer.KeepData(first);
        var options = TestSupport.Options(transport: transport);
        options.MaxRequestAttempts = 100;
        await using var client = new LaharsubClient(first.ApiAddress, options);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var subscription = client.Subscribe([new(topic, 1)]);
        var retries = Channel.CreateUnbounded<Exception>();
        subscription.Retrying += (_, retry) => retries.Writer.TryWrite(retry.Error);
        await using var reader = new EventReader(subscription);
        for (var i = 1; i <= 3; i++)
        {
            await client.PublishAsync(topic, $"m{i}").WaitAsync(TestSupport.Timeout);
        }
        var received = (await reader.TakeAsync(3)).Select(e => e.Text()).ToList();
        _ = reader.PendingStep;

        await first.StopAsync();
        // Published while no server answers: the subscription must still get them, once.
        await backend.PublishAsync(topic, TestSupport.Utf8("m4"), "text/plain");
        await backend.PublishAsync(topic, TestSupport.Utf8("m5"), "text/plain");
        await using var second = await LaharsubTestServer.StartAsync(services: keepData, port: first.BaseAddress.Port);
        // A publisher with no keep-alive connection to the stopped server (a publish sent on one that the
        // server closed is not retried: it may have been stored).
        await using var publisher = second.CreateLaharsubClient();
        await publisher.PublishAsync(topic, "m6").WaitAsync(TestSupport.Timeout);
        received.AddRange((await reader.TakeAsync(3)).Select(e => e.Text()));

        Assert.Equal(Enumerable.Range(1, 6).Select(i => $"m{i}"), received);
        Assert.Equal(7, subscription.Cursors[topic].From);
        Assert.Equal(transport, subscription.Transport);
        // The stream's end was reported: the server asked to reconnect (event: reconnect, close 1001), or
        // the connection went (the server sometimes resets a WebSocket before its 1001 frame gets out).
        Assert.True(retries.Reader.TryRead(out var reported), "Retrying was raised when the stream ended");
        Assert.True(reported is IOException or System.Net.WebSockets.WebSocketException, reported.ToString());
        await reader.AssertQuietForAsync(TimeSpan.FromMilliseconds(300));
    }

    [Theory]
    [InlineData(LaharsubTransport.WebSocket)]
    [InlineData(LaharsubTransport.ServerSentEvents)]
    public async Task WhenTheInstanceOfAStreamStopsTheSubscriptionCarriesOnAtAnotherWithEveryMessageOnce(LaharsubTransport transport)
    {
        await using var first = await LaharsubTestServer.StartAsync();
        await using var second = await LaharsubTestServer.StartAsync(services: LaharsubTestServer.KeepData(first));
        var options = TestSupport.Options(transport: transport);
        options.MaxRequestAttempts = 10;
        await using var client = new LaharsubClient([first.ApiAddress, second.ApiAddress], options);
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe(new Dictionary<long, TopicCursor> { [topic.TopicId] = new(1, topic.Epoch) }));
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishAsync(topic.TopicId, $"m{i}").WaitAsync(TestSupport.Timeout);
        }
        var received = (await reader.TakeAsync(5)).Select(e => e.Text()).ToList();
        _ = reader.PendingStep;

        await first.StopAsync();
        // A publisher with no keep-alive connection to the stopped instance (a publish sent on one that it
        // closed is not retried: it may have been stored).
        await using var publisher = second.CreateLaharsubClient();
        for (var i = 6; i <= 10; i++)
        {
            await publisher.PublishAsync(topic.TopicId, $"m{i}").WaitAsync(TestSupport.Timeout);
        }
        received.AddRange((await reader.TakeAsync(5)).Select(e => e.Text()));

        Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), received);
        Assert.Equal(second.ApiAddress, client.ApiAddress);
        Assert.Equal(new TopicCursor(11, topic.Epoch), reader.Subscription.Cursors[topic.TopicId]);
        Assert.Equal(transport, reader.Subscription.Transport);
        await reader.AssertQuietForAsync(TimeSpan.FromMilliseconds(300));
    }
}
