using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests;

public sealed class RetentionTests
{
    private static Task<LaharsubTestServer> StartWithClockAsync(FakeTimeProvider clock, Action<Laharsub.Server.LaharsubOptions>? configure = null) =>
        LaharsubTestServer.StartAsync(o => { o.MessageTimeToLive = TimeSpan.FromSeconds(15); configure?.Invoke(o); },
            services => services.AddSingleton<TimeProvider>(clock));

    [Theory]
    [InlineData("application/json")]
    [InlineData("multipart/mixed")]
    public async Task AfterTtlExpiryAReaderBehindIsToldWhichIdsAreLost(string format)
    {
        var clock = new FakeTimeProvider();
        await using var server = await StartWithClockAsync(clock);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "m1");
        await client.PublishTextAsync(topic, "m2");
        clock.Advance(TimeSpan.FromSeconds(10));
        await client.PublishTextAsync(topic, "m3");
        clock.Advance(TimeSpan.FromSeconds(6));

        var response = await client.PollAsync($"topics={topic}:1", format);

        var gap = Assert.Single(response.Notices);
        Assert.Equal(("gap", 1L, 2L), (gap.Type, gap.Get("fromMessageId"), gap.Get("toMessageId")));
        Assert.Equal(["m3"], response.Messages.Select(m => m.Text));
    }

    [Fact]
    public async Task WhenEverythingExpiredTheGapCoversUpToTheLastIdAndComesAtOnce()
    {
        var clock = new FakeTimeProvider();
        await using var server = await StartWithClockAsync(clock);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "m1");
        await client.PublishTextAsync(topic, "m2");
        clock.Advance(TimeSpan.FromSeconds(16));

        var response = await client.PollAsync($"topics={topic}:2&timeout=30");
        var info = await client.GetTopicAsync(topic);

        var gap = Assert.Single(response.Notices);
        Assert.Equal(("gap", 2L, 2L), (gap.Type, gap.Get("fromMessageId"), gap.Get("toMessageId")));
        Assert.Empty(response.Messages);
        Assert.Equal(0, info.GetProperty("retainedMessages").GetInt32());
        Assert.Equal(3, info.GetProperty("firstRetainedMessageId").GetInt64());
        Assert.Equal(0, info.GetProperty("retainedBytes").GetInt64());
    }

    [Fact]
    public async Task CountEvictionDropsTheOldestAndReadersBehindGetAGap()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }

        var behind = await client.PollAsync($"topics={topic}:2");
        var current = await client.PollAsync($"topics={topic}:3");

        var gap = Assert.Single(behind.Notices);
        Assert.Equal(("gap", 2L, 2L), (gap.Type, gap.Get("fromMessageId"), gap.Get("toMessageId")));
        Assert.Equal(["m3", "m4", "m5"], behind.Messages.Select(m => m.Text));
        Assert.Empty(current.Notices);
        Assert.Equal(["m3", "m4", "m5"], current.Messages.Select(m => m.Text));
    }

    [Fact]
    public async Task TheSweeperReturnsTheBytesOfExpiredMessagesOfIdleTopics()
    {
        var clock = new FakeTimeProvider();
        await using var server = await StartWithClockAsync(clock, o => o.RetentionSweepInterval = TimeSpan.FromSeconds(1));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishAsync(topic, new byte[500]);
        Assert.True((await server.Store.GetStatisticsAsync()).RetainedBytes > 500, "a message costs at least its body");

        clock.Advance(TimeSpan.FromSeconds(14));
        Assert.True((await server.Store.GetStatisticsAsync()).RetainedBytes > 500, "nothing expires before the time to live");
        // The sweep timer runs on the clock too: moving it past the expiry runs the sweep, here and now.
        clock.Advance(TimeSpan.FromSeconds(2));

        Assert.Equal(0, (await server.Store.GetStatisticsAsync()).RetainedBytes);
    }

    [Fact]
    public async Task ExpiredMessagesFreeRoomForNewOnesWhenRetentionIsFull()
    {
        var clock = new FakeTimeProvider();
        await using var server = await StartWithClockAsync(clock, o => { o.MaxRetainedBytes = 4000; o.MaxMessageBytes = 800; o.RetentionSweepInterval = TimeSpan.FromHours(1); });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishAsync(topic, new byte[800]);
        clock.Advance(TimeSpan.FromSeconds(16));

        var id = await client.PublishAsync(topic, new byte[800]);

        Assert.Equal(2, id);
    }
}
