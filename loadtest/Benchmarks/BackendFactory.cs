using Laharsub.Server.Delivery;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Storage;
using Laharsub.Server;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Benchmarks;

/// <summary>The real in-memory store and the shared poll assembly over it, wired as the server wires them.</summary>
internal sealed record Backend(InMemoryStore Store, SubscriptionRunner Poller, TopicSignals Signals)
{
    public ValueTask<PollResult> PollAsync(Subscription[] subscriptions, CancellationToken cancellationToken) =>
        Poller.PollAsync(subscriptions, answerBytes: null, SubscriptionWait.Until(cancellationToken));

    public ValueTask<PollResult> PollAsync(Subscription[] subscriptions, SubscriptionWait wait) =>
        Poller.PollAsync(subscriptions, answerBytes: null, wait);

    public ValueTask<PublishResult> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType) =>
        Store.PublishAsync(topicId, body, contentType);
}

/// <summary>The real in-memory backend, configured like the load test's server, on a clock the benchmark controls.</summary>
internal static class BackendFactory
{
    public static readonly ReadOnlyMemory<byte> TenBytes = new byte[] { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

    /// <summary>
    /// The store's own sweep timer runs on <paramref name="clock"/>, so it fires only when a benchmark
    /// advances the clock by RetentionSweepInterval (an hour by default here): benchmarks that measure the
    /// sweep call it themselves, and no sweep runs in the background of another measurement.
    /// </summary>
    public static Backend Create(FakeTimeProvider? clock = null, LaharsubOptions? options = null)
    {
        var settings = options ?? new LaharsubOptions { MessageTimeToLive = TimeSpan.FromSeconds(15), RetentionSweepInterval = TimeSpan.FromHours(1) };
        var signals = new TopicSignals();
        var store = new InMemoryStore(Options.Create(settings.Store), signals, clock ?? new FakeTimeProvider());
        return new Backend(store, new SubscriptionRunner(store, signals, Options.Create(settings.Delivery)), signals);
    }

    public static long[] CreateTopics(Backend backend, int count) =>
        Enumerable.Range(0, count).Select(_ => backend.Store.CreateTopicAsync().AsTask().GetAwaiter().GetResult()!.TopicId).ToArray();

    /// <summary>The cursor that makes a poll wait on the topic: one past its last message.</summary>
    public static long NextId(Backend backend, long topicId) =>
        backend.Store.GetTopicAsync(topicId).AsTask().GetAwaiter().GetResult()!.LastMessageId + 1;
}
