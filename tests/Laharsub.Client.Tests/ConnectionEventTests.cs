using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// <see cref="LaharsubSubscription.Connected"/>, <see cref="LaharsubSubscription.Reconnected"/> and
/// <see cref="LaharsubSubscription.Closed"/> beside <see cref="LaharsubSubscription.Retrying"/>, on every transport.
/// </summary>
public sealed class ConnectionEventTests
{
    [Theory]
    [InlineData(LaharsubTransport.LongPolling)]
    [InlineData(LaharsubTransport.ServerSentEvents)]
    [InlineData(LaharsubTransport.WebSocket)]
    public async Task ASubscriptionIsConnectedOnceThoughItsPollsAndMessagesGoOn(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(topic, 1)]);
        var log = new EventLog(subscription);
        await using var reader = new EventReader(subscription);

        for (var i = 1; i <= 3; i++)
        {
            await client.PublishAsync(topic, $"message {i}").WaitAsync(TestSupport.Timeout);
            Assert.Equal($"message {i}", (await reader.NextAsync()).Text());
        }

        Assert.Equal(["Connected"], log.Names);
    }

    [Theory]
    [InlineData(LaharsubTransport.LongPolling)]
    [InlineData(LaharsubTransport.ServerSentEvents)]
    [InlineData(LaharsubTransport.WebSocket)]
    public async Task AfterARestartTheSubscriptionRetriesThenIsReconnectedAndCarriesOn(LaharsubTransport transport)
    {
        var first = await LaharsubTestServer.StartAsync();
        var keepData = LaharsubTestServer.KeepData(first);
        await using var client = first.CreateLaharsubClient(transport);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(topic, 1)]);
        var log = new EventLog(subscription);
        await using var reader = new EventReader(subscription);
        await client.PublishAsync(topic, "before").WaitAsync(TestSupport.Timeout);
        Assert.Equal("before", (await reader.NextAsync()).Text());
        _ = reader.PendingStep;

        await first.DisposeAsync();
        await log.Retried.Task.WaitAsync(TestSupport.Timeout);
        await using var second = await LaharsubTestServer.StartAsync(services: keepData, port: first.BaseAddress.Port);
        await log.Reconnected.Task.WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "after").WaitAsync(TestSupport.Timeout);

        Assert.Equal("after", (await reader.NextAsync()).Text());
        var names = log.Names;
        Assert.Equal("Connected", names[0]);
        Assert.Equal("Reconnected", names[^1]);
        // A stream told to reconnect by the stopping server may reach it once more while it drains
        // (Reconnected, then Retrying again when it closes for good): either is in order between the two.
        Assert.All(names[1..^1], name => Assert.True(name is "Retrying" or "Reconnected", $"{name} between Connected and the last Reconnected"));
        Assert.Contains("Retrying", names[1..^1]);
    }

    [Fact]
    public async Task DisposingTheSubscriptionClosesItWithoutAnError()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "hello").WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(topic, 1)]);
        var log = new EventLog(subscription);
        await using var events = subscription.ReadAllAsync().GetAsyncEnumerator();
        Assert.True(await events.MoveNextAsync().AsTask().WaitAsync(TestSupport.Timeout));
        var step = events.MoveNextAsync().AsTask();
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), TestSupport.Timeout, "the poll waits");

        await subscription.DisposeAsync();

        Assert.False(await step.WaitAsync(TestSupport.Timeout));
        var closed = await log.Closing.Task.WaitAsync(TestSupport.Timeout);
        Assert.Null(closed.Error);
        Assert.Equal(["Connected", "Closed"], log.Names);
    }

    [Fact]
    public async Task CancellingTheReadClosesItWithoutAnError()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var subscription = client.Subscribe([new(topic, 1)]);
        var log = new EventLog(subscription);
        using var cancellation = new CancellationTokenSource();
        await using var events = subscription.ReadAllAsync(cancellation.Token).GetAsyncEnumerator();
        var step = events.MoveNextAsync().AsTask();
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), TestSupport.Timeout, "the poll waits");

        await cancellation.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => step.WaitAsync(TestSupport.Timeout));
        Assert.Null((await log.Closing.Task.WaitAsync(TestSupport.Timeout)).Error);
    }

    [Fact]
    public async Task ARefusalThatEndsTheReadClosesItWithThatError()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxSubscriptionsPerPoll = 1);
        await using var client = server.CreateLaharsubClient();
        var one = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var two = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var subscription = client.Subscribe([new(one, 1), new(two, 1)]);
        var log = new EventLog(subscription);

        var error = await Assert.ThrowsAsync<LaharsubException>(() => subscription.ReadAllAsync().FirstAsync().AsTask().WaitAsync(TestSupport.Timeout));

        Assert.Same(error, (await log.Closing.Task.WaitAsync(TestSupport.Timeout)).Error);
        Assert.Equal(["Closed"], log.Names);
    }

    /// <summary>The connection events a subscription raised, in order, and the first of each kind to await.</summary>
    private sealed class EventLog
    {
        private readonly List<string> _names = [];

        public EventLog(LaharsubSubscription subscription)
        {
            subscription.Connected += (_, _) => Add("Connected");
            subscription.Retrying += (_, _) =>
            {
                Add("Retrying");
                Retried.TrySetResult();
            };
            subscription.Reconnected += (_, _) =>
            {
                Add("Reconnected");
                Reconnected.TrySetResult();
            };
            subscription.Closed += (_, closed) =>
            {
                Add("Closed");
                Closing.TrySetResult(closed);
            };
        }

        public TaskCompletionSource Retried { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource Reconnected { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource<SubscriptionClosedEventArgs> Closing { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public List<string> Names
        {
            get
            {
                lock (_names)
                {
                    return [.. _names];
                }
            }
        }

        private void Add(string name)
        {
            lock (_names)
            {
                _names.Add(name);
            }
        }
    }
}
