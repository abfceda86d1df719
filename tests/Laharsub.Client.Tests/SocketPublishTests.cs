using System.Net;
using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Client.Tests;

/// <summary>The subscription's publishes on its WebSocket to several topics and with idempotency keys (docs/protocol.md, "WebSocket").</summary>
public sealed class SocketPublishTests
{
    [Fact]
    public async Task APublishToSeveralTopicsGoesOnTheWebSocketWithoutARequestAndIsAllOrNone()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options(transport: LaharsubTransport.WebSocket));
        var a = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        var b = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = await OpenSocketAsync(client, a.TopicId);
        var requests = handler.Requests;

        var published = await reader.Subscription.PublishManyAsync([b, a.TopicId], TestSupport.Utf8("both"), "text/plain",
            new PublishOptions { ExpectedEpochs = new Dictionary<long, string> { [a.TopicId] = a.Epoch! } }).WaitAsync(TestSupport.Timeout);
        var refused = await Assert.ThrowsAsync<LaharsubException>(() => reader.Subscription.PublishManyAsync([a.TopicId, 999], TestSupport.Utf8("never"), "text/plain")
            .WaitAsync(TestSupport.Timeout));
        var delivered = Assert.IsType<LaharsubMessage>(await reader.NextAsync());

        Assert.Equal(requests, handler.Requests);
        Assert.Equal([(b, 1L), (a.TopicId, 1L)], published.Select(m => (m.TopicId, m.MessageId)));
        Assert.Equal(a.Epoch, published[1].Epoch);
        Assert.Equal(HttpStatusCode.NotFound, refused.StatusCode);
        Assert.Equal((1L, "both"), (delivered.MessageId, delivered.GetString()));
        Assert.Equal(1, (await client.GetTopicAsync(a.TopicId).WaitAsync(TestSupport.Timeout)).LastMessageId);
    }

    [Fact]
    public async Task AKeyedPublishOnTheWebSocketIsStoredOnceWhateverWayItIsRepeated()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(LaharsubTransport.WebSocket);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = await OpenSocketAsync(client, topic);
        var keyed = new PublishOptions { IdempotencyKey = "socket-key" };

        var first = await reader.Subscription.PublishAsync(topic, TestSupport.Utf8("once"), "text/plain", keyed).WaitAsync(TestSupport.Timeout);
        var onSocket = await reader.Subscription.PublishAsync(topic, TestSupport.Utf8("once"), "text/plain", keyed).WaitAsync(TestSupport.Timeout);
        var overHttp = await client.PublishAsync(topic, TestSupport.Utf8("once"), "text/plain", keyed).WaitAsync(TestSupport.Timeout);
        var reused = await Assert.ThrowsAsync<LaharsubException>(() => reader.Subscription.PublishAsync(topic, TestSupport.Utf8("other"), "text/plain", keyed)
            .WaitAsync(TestSupport.Timeout));

        Assert.Equal(first, onSocket);
        Assert.Equal(first, overHttp);
        Assert.Equal(HttpStatusCode.UnprocessableEntity, reused.StatusCode);
        Assert.Equal(1, (await client.GetTopicAsync(topic).WaitAsync(TestSupport.Timeout)).LastMessageId);
    }

    /// <summary>
    /// The socket's answer does not come within RequestTimeout (the store holds it after storing): the outcome is
    /// unknown, so the publish is sent again over HTTP with the same key, which answers what was stored.
    /// </summary>
    [Theory]
    [InlineData("single")]
    [InlineData("many")]
    public async Task AKeyedSocketPublishWhoseAnswerIsLateIsRepeatedOverHttpAndStoredOnce(string kind)
    {
        var signals = new TopicSignals();
        using var inner = new InMemoryStore(Options.Create(new LaharsubStoreOptions()), signals, TimeProvider.System);
        var held = new HoldingStore(inner);
        await using var server = await LaharsubTestServer.StartAsync(services: s => { s.AddSingleton<ILaharsubStore>(held); s.AddSingleton(signals); });
        var clock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        var options = TestSupport.Options(transport: LaharsubTransport.WebSocket);
        options.TimeProvider = clock;
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, options);
        var a = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var b = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = await OpenSocketAsync(client, a);
        var requests = handler.Requests;

        Task<IReadOnlyList<PublishedMessage>> publish = kind == "single"
            ? Single(reader.Subscription.PublishAsync(a, TestSupport.Utf8("once"), "text/plain"))
            : reader.Subscription.PublishManyAsync([a, b], TestSupport.Utf8("once"), "text/plain");
        await held.Holding.WaitAsync(TestSupport.Timeout);
        clock.Advance(options.RequestTimeout);
        var published = await publish.WaitAsync(TestSupport.Timeout);
        held.Release();

        Assert.Equal(requests + 1, handler.Requests);
        Assert.All(published, m => Assert.Equal(1L, m.MessageId));
        Assert.Equal(1, (await client.GetTopicAsync(a).WaitAsync(TestSupport.Timeout)).LastMessageId);
        Assert.Equal(kind == "single" ? 0 : 1, (await client.GetTopicAsync(b).WaitAsync(TestSupport.Timeout)).LastMessageId);
    }

    private static async Task<IReadOnlyList<PublishedMessage>> Single(Task<PublishedMessage> publish) => [await publish];

    private static async Task<EventReader> OpenSocketAsync(LaharsubClient client, long topic)
    {
        var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(reader.Subscription.Transport == LaharsubTransport.WebSocket), TestSupport.Timeout, "the socket opens");
        return reader;
    }

    /// <summary>A store that, for its first keyed publish, stores it and then holds the answer until released.</summary>
    private sealed class HoldingStore(ILaharsubStore inner) : ForwardingStore(inner)
    {
        private readonly TaskCompletionSource _holding = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource _released = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _held;

        /// <summary>Completes once the first keyed publish is stored and held.</summary>
        public Task Holding => _holding.Task;

        public void Release() => _released.TrySetResult();

        public override async ValueTask<MultiPublishResult> PublishManyAsync(ReadOnlyMemory<PublishTarget> targets, ReadOnlyMemory<byte> body, string contentType,
            IdempotencyKey? idempotencyKey = null, CancellationToken cancellationToken = default)
        {
            var result = await Inner.PublishManyAsync(targets, body, contentType, idempotencyKey, cancellationToken);
            if (idempotencyKey is not null && Interlocked.Exchange(ref _held, 1) == 0)
            {
                _holding.TrySetResult();
                await _released.Task.WaitAsync(TestSupport.Timeout, CancellationToken.None);
            }
            return result;
        }
    }
}
