using System.Net;
using Laharsub.Server.Wire;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// A cursor given without its epoch, against a topic re-created after a restart that lost the data. The
/// client cannot tell which incarnation a bare cursor was saved in; what it can promise is stated here.
/// </summary>
public sealed class BareCursorServerTests
{
    /// <summary>The server restarted without its data and topic <c>TopicId</c> created again, holding <paramref name="messages"/> new messages.</summary>
    private static async Task<(LaharsubTestServer Server, long TopicId)> RecreatedTopicAsync(int messages, IReadOnlyDictionary<string, string?>? settings = null)
    {
        long topicId;
        int port;
        await using (var first = await LaharsubTestServer.StartAsync())
        {
            await using var before = first.CreateLaharsubClient(PollFormat.Json);
            topicId = (await before.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout)).TopicId;
            for (var i = 1; i <= 5; i++)
            {
                await before.PublishAsync(topicId, $"old {i}").WaitAsync(TestSupport.Timeout);
            }
            port = first.BaseAddress.Port;
        }
        var second = await LaharsubTestServer.StartAsync(port: port, settings: settings);
        await using var after = second.CreateLaharsubClient(PollFormat.Json);
        Assert.Equal(topicId, (await after.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout)).TopicId);
        for (var i = 1; i <= messages; i++)
        {
            await after.PublishAsync(topicId, $"new {i}").WaitAsync(TestSupport.Timeout);
        }
        return (second, topicId);
    }

    [Fact]
    public async Task ABareCursorBeyondTheRecreatedTopicsEndIsReportedAsAResetAndEverythingIsDelivered()
    {
        var (server, topicId) = await RecreatedTopicAsync(messages: 3);
        await using var _ = server;
        await using var client = server.CreateLaharsubClient(PollFormat.Json);

        await using var reader = new EventReader(client.Subscribe([new(topicId, 6)]));
        var events = await reader.TakeAsync(4);

        var reset = Assert.IsType<ResetNotice>(events[0]);
        Assert.Equal((false, 6L, 1L, 3L), (reset.EpochChanged, reset.RequestedFrom, reset.FirstMessageId, reset.LastMessageId));
        Assert.Equal(["new 1", "new 2", "new 3"], events.Skip(1).Select(e => e.Text()));
    }

    [Fact]
    public async Task ABareCursorInsideTheRecreatedTopicIsRefusedLoudlyWhenTheServerRequiresEpochs()
    {
        // Issue 23's reproduction: cursor 6 inside a new incarnation of 10 messages. Nothing on the wire
        // tells it from a cursor of this incarnation, so only the server's mode makes it loud.
        var (server, topicId) = await RecreatedTopicAsync(messages: 10, new Dictionary<string, string?> { ["Laharsub:RequireEpochForCursors"] = "true" });
        await using var _ = server;
        await using var client = server.CreateLaharsubClient(PollFormat.Json);

        await using var reader = new EventReader(client.Subscribe([new(topicId, 6)]));
        var error = await Assert.ThrowsAsync<LaharsubException>(() => reader.NextAsync());

        Assert.Equal(HttpStatusCode.BadRequest, error.StatusCode);
        Assert.Contains("add the topic's epoch", Assert.Single(error.Errors["topics"]));
    }
}
