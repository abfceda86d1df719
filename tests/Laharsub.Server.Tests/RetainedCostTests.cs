using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// Retained bytes, as <c>RetainedCost</c> prices them: the figures docs/protocol.md ("Two byte counts")
/// and docs/admin.md give, and an encoding larger than its estimate charged when made, kept only if it
/// fits, and released with its message.
/// </summary>
public sealed class RetainedCostTests
{
    [Fact]
    public async Task TwoMessagesOf5And26BodyBytesCount1656RetainedBytesAsTheProtocolDocumentSays()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishAsync(topic, new byte[5]);
        await client.PublishAsync(topic, new byte[26]);
        // Read in both formats: the encodings of binary bodies this small fit their estimates, so nothing more is charged.
        await client.PollAsync($"topics={topic}:1&timeout=0");
        await client.PollAsync($"topics={topic}:1&timeout=0", "multipart/mixed");

        Assert.Equal(31, (await client.GetTopicAsync(topic)).GetProperty("retainedBytes").GetInt64());
        Assert.Equal(1656, (await server.Store.GetStatisticsAsync()).RetainedBytes);
    }

    [Fact]
    public async Task AJsonEncodingLargerThanItsEstimateIsChargedWhenMadeAndReleasedWithItsMessage()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        // Control characters are six bytes each in JSON ("\u0001"): 6,000 bytes for a 1,000-byte body.
        await client.PublishTextAsync(topic, new string('\u0001', 1000));
        var published = (await server.Store.GetStatisticsAsync()).RetainedBytes;

        var poll = await client.PollAsync($"topics={topic}:1&timeout=0");
        var read = (await server.Store.GetStatisticsAsync()).RetainedBytes;
        using (await client.DeleteAsync($"topics/{topic}").WaitAsync(WireClient.Bound)) { }

        Assert.Equal(new string('\u0001', 1000), Assert.Single(poll.Messages).Text);
        Assert.InRange(read - published, 4500, 5500);
        Assert.Equal(0, (await server.Store.GetStatisticsAsync()).RetainedBytes);
    }

    [Fact]
    public async Task AJsonEncodingThatDoesNotFitIsServedButNotKept()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxRetainedBytes = 4000; o.MaxMessageBytes = 2000; });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, new string('\u0001', 1000));
        var published = (await server.Store.GetStatisticsAsync()).RetainedBytes;

        // Twice: each poll encodes it anew, and both answers are whole.
        var first = await client.PollAsync($"topics={topic}:1&timeout=0");
        var second = await client.PollAsync($"topics={topic}:1&timeout=0");

        Assert.Equal([new string('\u0001', 1000), new string('\u0001', 1000)], first.Messages.Concat(second.Messages).Select(m => m.Text));
        Assert.Equal(published, (await server.Store.GetStatisticsAsync()).RetainedBytes);
        Assert.InRange(published, 1, 4000);
    }
}
