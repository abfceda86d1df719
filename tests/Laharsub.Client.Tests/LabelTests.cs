using System.Net;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>Topic labels through the client: set at creation, read back, searched with a pattern.</summary>
public sealed class LabelTests
{
    [Fact]
    public async Task ATopicCreatedWithALabelReportsItWhenCreatedReadAndListed()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();

        var created = await client.CreateTopicWithEpochAsync("orders-eu").WaitAsync(TestSupport.Timeout);
        var plain = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var info = await client.GetTopicAsync(created.TopicId).WaitAsync(TestSupport.Timeout);
        var page = await client.ListTopicsAsync().WaitAsync(TestSupport.Timeout);

        Assert.Equal("orders-eu", created.Label);
        Assert.NotNull(created.Epoch);
        Assert.Equal("orders-eu", info.Label);
        Assert.Null((await client.GetTopicAsync(plain).WaitAsync(TestSupport.Timeout)).Label);
        Assert.Equal(["orders-eu", null], page.Topics.Select(topic => topic.Label));
    }

    [Fact]
    public async Task AListingByPatternFindsTheMatchingTopicsAcrossPages()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var orders = new List<long>();
        for (var i = 0; i < 3; i++)
        {
            orders.Add((await client.CreateTopicWithEpochAsync($"orders-{i}").WaitAsync(TestSupport.Timeout)).TopicId);
            await client.CreateTopicWithEpochAsync($"news-{i}").WaitAsync(TestSupport.Timeout);
        }

        var first = await client.ListTopicsAsync("orders-*", limit: 2).WaitAsync(TestSupport.Timeout);
        var second = await client.ListTopicsAsync("orders-*", first.NextAfterTopicId, limit: 2).WaitAsync(TestSupport.Timeout);
        var all = await client.ListAllTopicsAsync("orders-*", pageSize: 1).ToListAsync().AsTask().WaitAsync(TestSupport.Timeout);
        var exact = await client.ListAllTopicsAsync("news-1").ToListAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Equal(orders[..2], first.Topics.Select(topic => topic.TopicId));
        Assert.True(first.HasMore);
        Assert.Equal(orders[2..], second.Topics.Select(topic => topic.TopicId));
        Assert.Equal(orders, all.Select(topic => topic.TopicId));
        Assert.Equal(["news-1"], exact.Select(topic => topic.Label));
    }

    [Fact]
    public async Task AListingByPatternGoesOnPastAPageTheServerEndedWithoutAMatch()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        // More topics than the server scans for one filtered page (10,000), then the one that matches.
        for (var i = 0; i < 10_000; i++)
        {
            await server.Store.CreateTopicAsync();
        }
        var late = (await server.Store.CreateTopicAsync("late-1"))!.TopicId;
        await using var client = server.CreateLaharsubClient();

        var first = await client.ListTopicsAsync("late-*").WaitAsync(TestSupport.Timeout);
        var all = await client.ListAllTopicsAsync("late-*").ToListAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Empty(first.Topics);
        Assert.True(first.HasMore);
        Assert.Equal(10_000, first.NextAfterTopicId);
        Assert.Equal([late], all.Select(topic => topic.TopicId));
    }

    [Fact]
    public async Task ALabelTheServerRefusesIsA400NamingLabelAndCreatesNothing()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();

        var error = await Assert.ThrowsAsync<LaharsubException>(() => client.CreateTopicWithEpochAsync("9lives").WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.BadRequest, error.StatusCode);
        Assert.True(error.Errors.ContainsKey("label"), error.Message);
        Assert.Empty((await client.ListTopicsAsync().WaitAsync(TestSupport.Timeout)).Topics);
    }
}
