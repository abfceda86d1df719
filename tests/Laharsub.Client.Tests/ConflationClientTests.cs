using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// The client asks for conflation (<see cref="LaharsubSubscription.ConflationInterval"/>,
/// <see cref="LaharsubSubscription.StartAtLatest"/>) on every transport, reads the server's
/// <see cref="ConflatedNotice"/> and moves its cursors past the skipped range.
/// </summary>
public sealed class ConflationClientTests
{
    public static TheoryData<LaharsubTransport> All => TransportTests.All;

    [Theory]
    [MemberData(nameof(All))]
    public async Task StartAtLatestSkipsToTheLatestMessageOnceThenDeliversEveryMessage(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishAsync(topic, $"m{i}").WaitAsync(TestSupport.Timeout);
        }
        var subscription = client.Subscribe([new(topic, 1)]);
        subscription.StartAtLatest = true;
        await using var reader = new EventReader(subscription);

        var conflated = Assert.IsType<ConflatedNotice>(await reader.NextAsync());
        Assert.Equal((topic, 1L, 4L, 4L), (conflated.TopicId, conflated.FromMessageId, conflated.ToMessageId, conflated.Count));
        Assert.Equal("m5", (await reader.NextAsync()).Text());
        await client.PublishAsync(topic, "m6").WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "m7").WaitAsync(TestSupport.Timeout);
        var rest = await reader.TakeAsync(2);

        Assert.Equal(["m6", "m7"], rest.Select(e => e.Text()));
        Assert.Equal(8, subscription.Cursors[topic].From);
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task AConflationIntervalDeliversTheLatestOfEachTopicAndAnnouncesTheRest(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        var a = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var b = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 3; i++)
        {
            await client.PublishAsync(a, $"a{i}").WaitAsync(TestSupport.Timeout);
            await client.PublishAsync(b, $"b{i}").WaitAsync(TestSupport.Timeout);
        }
        var subscription = client.Subscribe([new(a, 1), new(b, 2)]);
        subscription.ConflationInterval = TimeSpan.FromMilliseconds(100);
        await using var reader = new EventReader(subscription);

        var events = await reader.TakeAsync(4);

        // Notices come first in a delivery, then the messages, each group in subscription order.
        Assert.Equal([(a, "conflated 1..2"), (b, "conflated 2..2"), (a, "a3"), (b, "b3")], events.Select(e => (e.TopicId, e switch
        {
            ConflatedNotice notice => $"conflated {notice.FromMessageId}..{notice.ToMessageId}",
            _ => e.Text(),
        })));
        Assert.Equal(new Dictionary<long, long> { [a] = 4, [b] = 4 }, subscription.Cursors.Froms());
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(60_001)]
    [InlineData(0.5)]
    public async Task AConflationIntervalTheServerWouldRefuseIsRefusedAtOnce(double milliseconds)
    {
        await using var client = new LaharsubClient(new Uri("http://127.0.0.1:9/ps/"));
        var subscription = client.Subscribe();

        var refused = Assert.Throws<ArgumentOutOfRangeException>(() => subscription.ConflationInterval = TimeSpan.FromMilliseconds(milliseconds));

        Assert.Contains("conflation interval", refused.Message);
        Assert.Equal(TimeSpan.Zero, subscription.ConflationInterval);
    }
}
