using System.Net;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

public sealed class TopicTests
{
    [Fact]
    public async Task CreatingTopicsReturnsIncreasingIds()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();

        var first = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var second = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        Assert.Equal(1, first);
        Assert.Equal(2, second);
    }

    [Fact]
    public async Task TopicInfoReportsItsMessagesAndRetention()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var before = DateTimeOffset.UtcNow.AddSeconds(-5);

        var empty = await client.GetTopicAsync(topic).WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "hello").WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "world!").WaitAsync(TestSupport.Timeout);
        var info = await client.GetTopicAsync(topic).WaitAsync(TestSupport.Timeout);

        Assert.Equal(0, empty.LastMessageId);
        Assert.Equal(1, empty.FirstRetainedMessageId);
        Assert.Equal(topic, info.TopicId);
        Assert.Equal(2, info.LastMessageId);
        Assert.Equal(1, info.FirstRetainedMessageId);
        Assert.Equal(2, info.RetainedMessages);
        Assert.Equal(11, info.RetainedBytes);
        Assert.Equal(0, info.WaitingPolls);
        Assert.InRange(info.CreatedAt, before, DateTimeOffset.UtcNow.AddSeconds(5));
    }

    [Fact]
    public async Task ListingTopicsPagesThroughThemInIdOrder()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        for (var i = 0; i < 5; i++)
        {
            await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        }

        var first = await client.ListTopicsAsync(limit: 2).WaitAsync(TestSupport.Timeout);
        var second = await client.ListTopicsAsync(first.NextAfterTopicId, 2).WaitAsync(TestSupport.Timeout);
        var last = await client.ListTopicsAsync(second.NextAfterTopicId, 2).WaitAsync(TestSupport.Timeout);

        Assert.Equal([1L, 2L], first.Topics.Select(t => t.TopicId));
        Assert.True(first.HasMore);
        Assert.Equal([3L, 4L], second.Topics.Select(t => t.TopicId));
        Assert.Equal([5L], last.Topics.Select(t => t.TopicId));
        Assert.False(last.HasMore);
    }

    [Fact]
    public async Task ListingAllTopicsFollowsEveryPage()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        for (var i = 0; i < 7; i++)
        {
            await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        }

        var all = await client.ListAllTopicsAsync(pageSize: 3).ToListAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Equal([1L, 2L, 3L, 4L, 5L, 6L, 7L], all.Select(t => t.TopicId));
    }

    [Fact]
    public async Task DeletingATopicMakesItUnknown()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        await client.DeleteTopicAsync(topic).WaitAsync(TestSupport.Timeout);

        var error = await Assert.ThrowsAsync<LaharsubException>(() => client.GetTopicAsync(topic).WaitAsync(TestSupport.Timeout));
        Assert.Equal(HttpStatusCode.NotFound, error.StatusCode);
        Assert.Contains($"Topic {topic} does not exist", error.Message);
        Assert.Empty((await client.ListTopicsAsync().WaitAsync(TestSupport.Timeout)).Topics);
    }
}
