using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// A WebSocket's <c>subscribed</c> frame names each topic's epoch. A cursor without one (a bare cursor, on a topic
/// that has delivered nothing yet) takes it, as it would from a delivery on any transport, so that a topic
/// re-created while the socket was down is reported as a reset. Before, the client kept the bare cursor, and the
/// new incarnation's messages came as the old topic's continuation, without a notice.
/// </summary>
public sealed class SocketEpochTests
{
    [Fact]
    public async Task ATopicRecreatedWhileTheSocketWasDownIsAResetThoughItHadDeliveredNothing()
    {
        var first = await LaharsubTestServer.StartAsync();
        await using var client = first.CreateLaharsubClient(LaharsubTransport.WebSocket);
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(topic.TopicId, 1)]);
        var connected = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var retrying = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        subscription.Connected += (_, _) => connected.TrySetResult();
        subscription.Retrying += (_, _) => retrying.TrySetResult();
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;
        await connected.Task.WaitAsync(TestSupport.Timeout);

        // The restart without the data: the topic's id names a new incarnation, which holds 5 messages by the
        // time the client reconnects (made on a server of its own first, so that the client never finds the id missing).
        CreatedTopic recreated;
        Action<Microsoft.Extensions.DependencyInjection.IServiceCollection> newData;
        await using (var elsewhere = await LaharsubTestServer.StartAsync())
        {
            await using var publisher = elsewhere.CreateLaharsubClient();
            recreated = await publisher.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
            for (var i = 1; i <= 5; i++)
            {
                await publisher.PublishAsync(recreated.TopicId, $"new {i}").WaitAsync(TestSupport.Timeout);
            }
            newData = LaharsubTestServer.KeepData(elsewhere);
        }
        var port = first.BaseAddress.Port;
        await first.DisposeAsync();
        await retrying.Task.WaitAsync(TestSupport.Timeout);
        await using var second = await LaharsubTestServer.StartAsync(services: newData, port: port);
        var events = await reader.TakeAsync(6);

        Assert.Equal(topic.TopicId, recreated.TopicId);
        Assert.NotEqual(topic.Epoch, recreated.Epoch);
        var reset = Assert.IsType<ResetNotice>(events[0]);
        Assert.True(reset.EpochChanged, reset.ToString());
        Assert.Equal((recreated.Epoch, topic.Epoch, 1L, 5L), (reset.Epoch, reset.RequestedEpoch, reset.FirstMessageId, reset.LastMessageId));
        Assert.Equal(Enumerable.Range(1, 5).Select(i => $"new {i}"), events.Skip(1).Select(e => e.Text()));
        Assert.Equal(new TopicCursor(6, recreated.Epoch), reader.Subscription.Cursors[topic.TopicId]);
    }
}
