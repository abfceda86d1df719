using BenchmarkDotNet.Attributes;
using Laharsub.Server.Delivery;

namespace Laharsub.Benchmarks;

/// <summary>
/// The token a waiting poll waits on, made and released once per poll: the linked source with
/// <c>CancelAfter</c> (system clock only) that the endpoint used first, against
/// <see cref="SubscriptionWait"/> (a timer on the host's TimeProvider and the two tokens, each waking the
/// waiter directly), each around a poll that registers on one topic and is released by its client
/// going away.
/// </summary>
[MemoryDiagnoser]
public class PollTimeoutBenchmarks
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private readonly CancellationTokenSource _stopping = new();
    private Backend _backend = null!;
    private Subscription[] _subscriptions = [];

    [GlobalSetup]
    public void Setup()
    {
        _backend = BackendFactory.Create();
        _subscriptions = BackendFactory.CreateTopics(_backend, 1).Select(id => new Subscription(id, 1)).ToArray();
    }

    [GlobalCleanup]
    public void Cleanup() => _stopping.Dispose();

    [Benchmark(Baseline = true)]
    public async Task<bool> LinkedSourceCancelAfter()
    {
        using var client = new CancellationTokenSource();
        using var wait = CancellationTokenSource.CreateLinkedTokenSource(client.Token, _stopping.Token);
        wait.CancelAfter(Timeout);
        var poll = _backend.PollAsync(_subscriptions, wait.Token);
        client.Cancel();
        return (await poll).IsEmpty;
    }

    [Benchmark]
    public async Task<bool> WakeTheWaiterDirectly()
    {
        using var client = new CancellationTokenSource();
        var poll = _backend.PollAsync(_subscriptions, new SubscriptionWait(Timeout, TimeProvider.System, client.Token, _stopping.Token));
        client.Cancel();
        return (await poll).IsEmpty;
    }
}
