using System.Net;
using System.Threading.Channels;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// <see cref="LaharsubTransport.Auto"/>: a WebSocket where it can be had, else Server-Sent Events, else
/// long polling, moving on when a proxy refuses a transport or holds a stream back.
/// </summary>
public sealed class TransportFallbackTests
{
    private static (LaharsubSubscription Subscription, Channel<TransportChangedEventArgs> Changes) Subscribe(LaharsubClient client, long topic)
    {
        var subscription = client.Subscribe([new(topic, 1)]);
        var changes = Channel.CreateUnbounded<TransportChangedEventArgs>();
        subscription.TransportChanged += (sender, change) =>
        {
            Assert.Same(subscription, sender);
            changes.Writer.TryWrite(change);
        };
        return (subscription, changes);
    }

    [Fact]
    public async Task AutoPicksAWebSocketOnTheStandaloneServer()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(LaharsubTransport.Auto);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "hello").WaitAsync(TestSupport.Timeout);
        var (subscription, changes) = Subscribe(client, topic);
        await using var reader = new EventReader(subscription);
        Assert.Null(subscription.Transport);

        Assert.Equal("hello", (await reader.NextAsync()).Text());
        var change = await changes.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Equal(LaharsubTransport.WebSocket, subscription.Transport);
        Assert.Equal(LaharsubTransport.WebSocket, change.Transport);
        Assert.Null(change.Reason);
        Assert.False(changes.Reader.TryRead(out _));
    }

    [Fact]
    public async Task AutoFallsBackToServerSentEventsWhenAProxyRefusesTheUpgradeAndStaysThere()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var proxy = await TransportProxy.StartAsync(server.BaseAddress);
        await using var client = new LaharsubClient(proxy.ApiAddress, TestSupport.Options(transport: LaharsubTransport.Auto));
        await using var publisher = server.CreateLaharsubClient();
        var topic = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var other = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await publisher.PublishAsync(topic, "first").WaitAsync(TestSupport.Timeout);
        var (subscription, changes) = Subscribe(client, topic);
        await using var reader = new EventReader(subscription);

        Assert.Equal("first", (await reader.NextAsync()).Text());
        var change = await changes.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        // A topic added while running opens the event stream again: through the proxy, as an event stream again.
        subscription.Add(other, 1);
        await publisher.PublishAsync(other, "second").WaitAsync(TestSupport.Timeout);
        Assert.Equal("second", (await reader.NextAsync()).Text());
        await publisher.PublishAsync(topic, "third").WaitAsync(TestSupport.Timeout);
        Assert.Equal("third", (await reader.NextAsync()).Text());

        Assert.Equal(LaharsubTransport.ServerSentEvents, change.Transport);
        Assert.Equal(HttpStatusCode.BadRequest, Assert.IsType<LaharsubException>(change.Reason).StatusCode);
        Assert.Equal(LaharsubTransport.ServerSentEvents, subscription.Transport);
        Assert.Equal(1, proxy.RefusedUpgrades);
        Assert.False(changes.Reader.TryRead(out _));
    }

    [Fact]
    public async Task AutoFallsBackToLongPollingWhenTheEventStreamIsRefusedToo()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var proxy = await TransportProxy.StartAsync(server.BaseAddress, TransportProxy.EventStreams.Refuse);
        await using var client = new LaharsubClient(proxy.ApiAddress, TestSupport.Options(transport: LaharsubTransport.Auto));
        await using var publisher = server.CreateLaharsubClient();
        var topic = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var (subscription, changes) = Subscribe(client, topic);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), TestSupport.Timeout, "a long poll waits");

        await publisher.PublishAsync(topic, "polled").WaitAsync(TestSupport.Timeout);
        Assert.Equal("polled", (await reader.NextAsync()).Text());
        var change = await changes.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Equal(LaharsubTransport.LongPolling, change.Transport);
        Assert.Equal(HttpStatusCode.NotAcceptable, Assert.IsType<LaharsubException>(change.Reason).StatusCode);
        Assert.Equal(LaharsubTransport.LongPolling, subscription.Transport);
        Assert.Equal((1, 1), (proxy.RefusedUpgrades, proxy.RefusedEventStreams));
    }

    [Fact]
    public async Task AutoFallsBackToLongPollingWhenTheEventStreamDoesNotStartInTime()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var proxy = await TransportProxy.StartAsync(server.BaseAddress, TransportProxy.EventStreams.Hold);
        // The client's clock: the stream's time to start runs out when the test says, not on a busy machine.
        var clock = new WatchedClock();
        var options = TestSupport.Options(transport: LaharsubTransport.Auto);
        options.TimeProvider = clock;
        await using var client = new LaharsubClient(proxy.ApiAddress, options);
        await using var publisher = server.CreateLaharsubClient();
        var topic = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var (subscription, changes) = Subscribe(client, topic);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;

        await proxy.Held.WaitAsync(TestSupport.Timeout);
        // Armed with RequestTimeout: the refused upgrade's time limit, the event stream request's, then
        // (once its headers came) the stream's time to start. Only the last one is still running.
        for (var armed = 0; armed < 3; armed++)
        {
            await clock.NextArmedAsync(due => due == options.RequestTimeout);
        }
        Assert.Null(subscription.Transport);
        clock.Advance(options.RequestTimeout);
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), TestSupport.Timeout, "a long poll waits");
        await publisher.PublishAsync(topic, "polled").WaitAsync(TestSupport.Timeout);
        Assert.Equal("polled", (await reader.NextAsync()).Text());
        var change = await changes.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Equal(LaharsubTransport.LongPolling, change.Transport);
        Assert.IsType<TimeoutException>(change.Reason);
    }

    [Theory]
    [InlineData(LaharsubTransport.WebSocket, HttpStatusCode.BadRequest)]
    [InlineData(LaharsubTransport.ServerSentEvents, HttpStatusCode.NotAcceptable)]
    public async Task ATransportChosenOnPurposeThatIsRefusedEndsTheSubscriptionWithTheRefusal(LaharsubTransport transport, HttpStatusCode status)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var proxy = await TransportProxy.StartAsync(server.BaseAddress, TransportProxy.EventStreams.Refuse);
        await using var client = new LaharsubClient(proxy.ApiAddress, TestSupport.Options(transport: transport));
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));

        var refused = await Assert.ThrowsAsync<LaharsubException>(() => reader.PendingStep.WaitAsync(TestSupport.Timeout));

        Assert.Equal(status, refused.StatusCode);
        Assert.Null(reader.Subscription.Transport);
        Assert.Equal(1, proxy.RefusedUpgrades + proxy.RefusedEventStreams);
    }
}
