using Microsoft.Extensions.DependencyInjection;
using System.Net;
using Laharsub.Server.Endpoints;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// Topic epochs end to end against the real server: a topic id that comes to name another topic
/// (a restart without persistence) is never taken for the old one, by a subscriber or a publisher.
/// </summary>
public sealed class EpochServerTests
{
    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task ResumingWithSavedCursorsAfterARestartThatLostTheDataReportsTheNewTopicInsteadOfSkippingItsStart(PollFormat format)
    {
        // Issue 11's reproduction: topic 2 read up to 5, the server restarted without its data, topic 2
        // created again with 10 messages. Without epochs the cursor 6 lies within the new topic and 1..5
        // were skipped without notice.
        var first = await LaharsubTestServer.StartAsync();
        await using var client = first.CreateLaharsubClient(format);
        await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishAsync(topic.TopicId, $"old {i}").WaitAsync(TestSupport.Timeout);
        }
        IReadOnlyDictionary<long, TopicCursor> saved;
        await using (var reader = new EventReader(client.Subscribe([new(topic.TopicId, 1)])))
        {
            await reader.TakeAsync(5);
            saved = reader.Subscription.Cursors;
        }
        var port = first.BaseAddress.Port;
        await first.DisposeAsync();

        await using var second = await LaharsubTestServer.StartAsync(port: port);
        CreatedTopic recreated;
        do
        {
            recreated = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        }
        while (recreated.TopicId < topic.TopicId);
        for (var i = 1; i <= 10; i++)
        {
            await client.PublishAsync(topic.TopicId, $"new {i}").WaitAsync(TestSupport.Timeout);
        }
        await using var resumed = new EventReader(client.Subscribe(saved));
        var events = await resumed.TakeAsync(11);

        Assert.Equal(new TopicCursor(6, topic.Epoch), saved[topic.TopicId]);
        Assert.Equal(topic.TopicId, recreated.TopicId);
        Assert.NotNull(topic.Epoch);
        Assert.NotEqual(topic.Epoch, recreated.Epoch);
        var reset = Assert.IsType<ResetNotice>(events[0]);
        Assert.True(reset.EpochChanged, reset.ToString());
        Assert.Equal((topic.TopicId, recreated.Epoch, topic.Epoch, 6L, 1L, 10L),
            (reset.TopicId, reset.Epoch, reset.RequestedEpoch, reset.RequestedFrom, reset.FirstMessageId, reset.LastMessageId));
        Assert.Equal(Enumerable.Range(1, 10).Select(i => $"new {i}"), events.Skip(1).Select(e => e.Text()));
        Assert.All(events.Skip(1), e => Assert.Equal(recreated.Epoch, e.Epoch));
        Assert.Equal(new TopicCursor(11, recreated.Epoch), resumed.Subscription.Cursors[topic.TopicId]);
    }

    [Fact]
    public async Task OnARedisThatLostItsDataASavedCursorGetsAnEpochResetAndAPinnedPublisherA412()
    {
        // The same scenario on the Redis store: Laharsub keeps running, Redis (without persistence) is
        // killed and started again empty, and the topic id is created again with 10 messages.
        await using var redis = await RedisServer.StartAsync();
        await using var server = await LaharsubTestServer.StartAsync(services: services => services.AddLaharsub().AddRedis(redis.Configuration));
        await using var client = server.CreateLaharsubClient(PollFormat.Json);
        await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        var pinned = new PublishOptions { ExpectedEpoch = topic.Epoch };
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishAsync(topic.TopicId, $"old {i}", "text/plain", pinned).WaitAsync(TestSupport.Timeout);
        }
        IReadOnlyDictionary<long, TopicCursor> saved;
        await using (var reader = new EventReader(client.Subscribe([new(topic.TopicId, 1)])))
        {
            await reader.TakeAsync(5);
            saved = reader.Subscription.Cursors;
        }

        await redis.KillAsync();
        await using var emptied = await RedisServer.StartAsync(redis.Port);
        CreatedTopic? recreated = null;
        await Eventually.HoldsAsync(async () =>
        {
            try
            {
                recreated = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
                return recreated.TopicId >= topic.TopicId;
            }
            catch (LaharsubException e) when (e.StatusCode == HttpStatusCode.ServiceUnavailable)
            {
                return false;
            }
        }, TimeSpan.FromSeconds(30), "Laharsub reconnects to the restarted Redis and creates the topic id again");
        for (var i = 1; i <= 10; i++)
        {
            await client.PublishAsync(topic.TopicId, $"new {i}").WaitAsync(TestSupport.Timeout);
        }
        var error = await Assert.ThrowsAsync<EpochMismatchException>(
            () => client.PublishAsync(topic.TopicId, "meant for the first topic", "text/plain", pinned).WaitAsync(TestSupport.Timeout));
        await using var resumed = new EventReader(client.Subscribe(saved));
        var events = await resumed.TakeAsync(11);

        Assert.Equal((topic.TopicId, topic.Epoch), (recreated!.TopicId, saved[topic.TopicId].Epoch));
        Assert.NotEqual(topic.Epoch, recreated.Epoch);
        Assert.Equal((HttpStatusCode.PreconditionFailed, topic.Epoch, recreated.Epoch), (error.StatusCode, error.ExpectedEpoch, error.CurrentEpoch));
        var reset = Assert.IsType<ResetNotice>(events[0]);
        Assert.True(reset.EpochChanged, reset.ToString());
        Assert.Equal((recreated.Epoch, topic.Epoch, 6L, 1L, 10L),
            (reset.Epoch, reset.RequestedEpoch, reset.RequestedFrom, reset.FirstMessageId, reset.LastMessageId));
        Assert.Equal(Enumerable.Range(1, 10).Select(i => $"new {i}"), events.Skip(1).Select(e => e.Text()));
        Assert.Equal(10, (await client.GetTopicAsync(topic.TopicId).WaitAsync(TestSupport.Timeout)).LastMessageId);
    }

    [Fact]
    public async Task APublisherPinnedToAnEpochIsRefusedAfterARestartThatLostTheDataAndNothingIsPublished()
    {
        var first = await LaharsubTestServer.StartAsync();
        await using var client = first.CreateLaharsubClient();
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        var pinned = new PublishOptions { ExpectedEpoch = topic.Epoch };
        var before = await client.PublishAsync(topic.TopicId, "to the first topic", "text/plain", pinned).WaitAsync(TestSupport.Timeout);
        var port = first.BaseAddress.Port;
        await first.DisposeAsync();

        await using var second = await LaharsubTestServer.StartAsync(port: port);
        var recreated = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        var error = await Assert.ThrowsAsync<EpochMismatchException>(
            () => client.PublishAsync(topic.TopicId, "meant for the first topic", "text/plain", pinned).WaitAsync(TestSupport.Timeout));
        var info = await client.GetTopicAsync(topic.TopicId).WaitAsync(TestSupport.Timeout);

        Assert.Equal((topic.TopicId, 1L, topic.Epoch), (before.TopicId, before.MessageId, before.Epoch));
        Assert.Equal(topic.TopicId, recreated.TopicId);
        Assert.Equal((HttpStatusCode.PreconditionFailed, topic.TopicId, topic.Epoch, recreated.Epoch),
            (error.StatusCode, error.TopicId, error.ExpectedEpoch, error.CurrentEpoch));
        Assert.Equal(0, info.LastMessageId);
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task EveryAnswerAboutOneTopicNamesTheSameEpoch(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 1);
        await using var client = server.CreateLaharsubClient(format);
        var created = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        var other = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(created.TopicId, "evicted").WaitAsync(TestSupport.Timeout);
        var published = await client.PublishAsync(created.TopicId, "kept").WaitAsync(TestSupport.Timeout);
        var info = await client.GetTopicAsync(created.TopicId).WaitAsync(TestSupport.Timeout);
        var listed = await client.ListAllTopicsAsync().ToListAsync().AsTask().WaitAsync(TestSupport.Timeout);

        await using var reader = new EventReader(client.Subscribe([new(created.TopicId, 1)]));
        var events = await reader.TakeAsync(2);
        _ = reader.PendingStep;
        // Deleted while the poll waits, so that it is told (a poll sent after the deletion gets a 404 instead).
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(created.TopicId)).WaitingPolls == 1, TestSupport.Timeout, "the poll waits");
        await client.DeleteTopicAsync(created.TopicId).WaitAsync(TestSupport.Timeout);
        var deleted = Assert.IsType<TopicDeletedNotice>(await reader.NextAsync());

        Assert.Matches("^[0-9a-f]{16}$", created.Epoch);
        Assert.NotEqual(created.Epoch, other.Epoch);
        Assert.Equal(created.Epoch, published.Epoch);
        Assert.Equal(created.Epoch, info.Epoch);
        Assert.Equal([created.Epoch, other.Epoch], listed.Select(t => t.Epoch));
        Assert.IsType<GapNotice>(events[0]);
        Assert.All(events, e => Assert.Equal(created.Epoch, e.Epoch));
        Assert.Equal(created.Epoch, deleted.Epoch);
    }

    [Fact]
    public async Task ACursorSavedWithoutAnEpochResumesAsBeforeAndLearnsTheEpochFromTheFirstAnswer()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 3; i++)
        {
            await client.PublishAsync(topic.TopicId, $"m{i}").WaitAsync(TestSupport.Timeout);
        }

        await using var reader = new EventReader(client.Subscribe([new(topic.TopicId, 2)]));
        var events = await reader.TakeAsync(2);

        Assert.Equal(["m2", "m3"], events.Select(e => e.Text()));
        Assert.Equal(new TopicCursor(4, topic.Epoch), reader.Subscription.Cursors[topic.TopicId]);
    }
}
