using Laharsub.Testing;

namespace Laharsub.Client.Tests;

public sealed class SubscriptionTests
{
    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task OneSubscriptionMultiplexesSeveralTopicsOnOnePoll(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options(format));
        long[] topics = [await client.CreateTopicAsync(), await client.CreateTopicAsync(), await client.CreateTopicAsync()];
        await using var reader = new EventReader(client.Subscribe());
        foreach (var topic in topics)
        {
            await reader.Subscription.AddAsync(topic).WaitAsync(TestSupport.Timeout);
        }
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(topics[2])).WaitingPolls == 1, TestSupport.Timeout, "the poll waits on the last topic");

        foreach (var round in new[] { "a", "b" })
        {
            foreach (var topic in topics)
            {
                await client.PublishAsync(topic, $"{round}{topic}").WaitAsync(TestSupport.Timeout);
            }
        }
        var events = await reader.TakeAsync(6);

        foreach (var topic in topics)
        {
            Assert.Equal([$"a{topic}", $"b{topic}"], events.Where(e => e.TopicId == topic).Select(e => e.Text()));
        }
        Assert.Equal(1, handler.MaxPollsInFlight);
        Assert.Equal(topics.ToDictionary(t => t, _ => 3L), reader.Subscription.Cursors.Froms());
    }

    [Fact]
    public async Task AddingATopicWithoutACursorStartsWithTheNextMessagePublished()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "old").WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe());

        await reader.Subscription.AddAsync(topic).WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "new").WaitAsync(TestSupport.Timeout);

        Assert.Equal(2, reader.Subscription.Cursors[topic].From);
        Assert.Equal("new", (await reader.NextAsync()).Text());
    }

    [Fact]
    public async Task ACursorOfOneDeliversEverythingRetained()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "one").WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "two").WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe());

        reader.Subscription.Add(topic, from: 1);

        Assert.Equal(["one", "two"], (await reader.TakeAsync(2)).Select(e => e.Text()));
    }

    [Fact]
    public async Task RemovingATopicStopsItsMessagesWhileTheOthersGoOn()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var removed = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var kept = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(removed, 1), new(kept, 1)]));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(kept)).WaitingPolls == 1, TestSupport.Timeout, "the poll waits");

        Assert.True(reader.Subscription.Remove(removed));
        Assert.False(reader.Subscription.Remove(removed));
        await client.PublishAsync(removed, "unwanted").WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(kept, "wanted").WaitAsync(TestSupport.Timeout);

        var message = await reader.NextAsync();
        Assert.Equal("wanted", message.Text());
        Assert.Equal([kept], reader.Subscription.Cursors.Keys);
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task SavedCursorsResumeExactlyAfterTheLastEventRead(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(format);
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
            // The whole answer (10 messages) arrived in one poll; stop in the middle of it.
            firstRun = (await reader.TakeAsync(7)).Select(e => e.Text()).ToList();
            saved = reader.Subscription.Cursors;
        }
        await using var resumed = new EventReader(client.Subscribe(saved));
        var secondRun = (await resumed.TakeAsync(3)).Select(e => e.Text()).ToList();

        Assert.Equal(["a1", "a2", "a3", "a4", "a5", "b1", "b2", "b3", "b4", "b5"], firstRun.Concat(secondRun).Order());
        Assert.Equal(new Dictionary<long, long> { [a] = 6, [b] = 6 }, resumed.Subscription.Cursors.Froms());
    }

    [Fact]
    public async Task DeletingATopicDeliversANoticeAndTheOtherTopicsGoOn()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var deleted = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var kept = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(deleted, 1), new(kept, 1)]));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(deleted)).WaitingPolls == 1, TestSupport.Timeout, "the poll waits");

        await client.DeleteTopicAsync(deleted).WaitAsync(TestSupport.Timeout);
        var notice = Assert.IsType<TopicDeletedNotice>(await reader.NextAsync());
        await client.PublishAsync(kept, "still here").WaitAsync(TestSupport.Timeout);

        Assert.Equal(deleted, notice.TopicId);
        Assert.Equal("still here", (await reader.NextAsync()).Text());
        Assert.Equal([kept], reader.Subscription.Cursors.Keys);
    }

    [Fact]
    public async Task AnUnknownTopicIsReportedAndDroppedWhileTheOtherTopicsGoOn()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var known = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(known, "hello").WaitAsync(TestSupport.Timeout);

        await using var reader = new EventReader(client.Subscribe([new(known, 1), new(999, 1)]));
        var notFound = Assert.IsType<TopicNotFoundNotice>(await reader.NextAsync());
        var message = await reader.NextAsync();

        Assert.Equal(999, notFound.TopicId);
        Assert.Contains("Topic 999 does not exist", notFound.Detail);
        Assert.Equal("hello", message.Text());
        Assert.Equal([known], reader.Subscription.Cursors.Keys);
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task EvictedMessagesAreReportedAsAGapBeforeTheRest(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 2);
        await using var client = server.CreateLaharsubClient(format);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishAsync(topic, $"m{i}").WaitAsync(TestSupport.Timeout);
        }

        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        var events = await reader.TakeAsync(3);

        var gap = Assert.IsType<GapNotice>(events[0]);
        Assert.Equal((topic, 1L, 3L, 3L), (gap.TopicId, gap.FromMessageId, gap.ToMessageId, gap.Count));
        Assert.Equal(["m4", "m5"], events.Skip(1).Select(e => e.Text()));
        Assert.Equal(6, reader.Subscription.Cursors[topic].From);
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task ACursorBeyondTheTopicsEndIsResetToItsStart(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(format);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "m1").WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "m2").WaitAsync(TestSupport.Timeout);

        await using var reader = new EventReader(client.Subscribe([new(topic, 10)]));
        var events = await reader.TakeAsync(3);

        var reset = Assert.IsType<ResetNotice>(events[0]);
        Assert.Equal((10L, 1L, 2L), (reset.RequestedFrom, reset.FirstMessageId, reset.LastMessageId));
        Assert.Equal(["m1", "m2"], events.Skip(1).Select(e => e.Text()));
        Assert.Equal(3, reader.Subscription.Cursors[topic].From);
    }

    [Fact]
    public async Task AnEmptySubscriptionWaitsUntilATopicIsAdded()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options());
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "first").WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe());
        var requestsBefore = handler.Requests;

        await reader.AssertQuietForAsync(TimeSpan.FromMilliseconds(200));
        Assert.Equal(requestsBefore, handler.Requests);
        reader.Subscription.Add(topic, 1);

        Assert.Equal("first", (await reader.NextAsync()).Text());
    }

    [Fact]
    public async Task ASubscriptionCanBeReadOnceAtATime()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        await using var reader = new EventReader(client.Subscribe());
        _ = reader.PendingStep;

        await using var second = reader.Subscription.ReadAllAsync().GetAsyncEnumerator();
        await Assert.ThrowsAsync<InvalidOperationException>(() => second.MoveNextAsync().AsTask().WaitAsync(TestSupport.Timeout));
    }
    [Fact]
    public async Task AddingATopicReplacesTheWaitingPollAtOnce()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        // Polls are held for a minute: only replacing the waiting one can deliver within seconds.
        await using var client = new LaharsubClient(http, TestSupport.Options(pollSeconds: 60));
        var idle = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var busy = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(busy, "waiting for you").WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(idle, 1)]));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(idle)).WaitingPolls == 1, TestSupport.Timeout, "the poll waits");

        reader.Subscription.Add(busy, 1);

        Assert.Equal("waiting for you", (await reader.NextAsync(TimeSpan.FromSeconds(5))).Text());
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(idle)).WaitingPolls == 1, TestSupport.Timeout, "the new poll waits");
        Assert.Equal(1, handler.MaxPollsInFlight);
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task ChangingTopicsInTheMiddleOfAnAnswerNeitherLosesNorRepeatsItsRest(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(format);
        var a = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var b = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 10; i++)
        {
            await client.PublishAsync(a, $"a{i}").WaitAsync(TestSupport.Timeout);
        }
        await client.PublishAsync(b, "b1").WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(a, 1)]));

        // All ten arrive in one answer; the change comes after three of them were read.
        var texts = (await reader.TakeAsync(3)).Select(e => e.Text()).ToList();
        reader.Subscription.Add(b, 1);
        texts.AddRange((await reader.TakeAsync(8)).Select(e => e.Text()));

        Assert.Equal(["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "b1"], texts);
        // The subscription goes on, and a message published now is the very next event: a repeat of
        // anything above would have to come before it.
        await client.PublishAsync(b, "b2").WaitAsync(TestSupport.Timeout);
        Assert.Equal("b2", (await reader.NextAsync()).Text());
        Assert.Equal(new Dictionary<long, long> { [a] = 11, [b] = 3 }, reader.Subscription.Cursors.Froms());
    }
}
