using BenchmarkDotNet.Attributes;
using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;

namespace Laharsub.Benchmarks;

/// <summary>
/// A poll over N topics that finds nothing, registers on every topic, is released (as by its timeout
/// or the client leaving) and unregisters from every topic: the fixed cost of a multiplexed poll.
/// </summary>
[MemoryDiagnoser]
public class PollRegistrationBenchmarks
{
    private Backend _backend = null!;
    private Subscription[] _subscriptions = [];

    [Params(1, 16, 256)]
    public int Topics { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _backend = BackendFactory.Create();
        _subscriptions = BackendFactory.CreateTopics(_backend, Topics).Select(id => new Subscription(id, 1)).ToArray();
    }

    [Benchmark]
    public async Task<bool> RegisterAndLeave()
    {
        using var release = new CancellationTokenSource();
        var poll = _backend.PollAsync(_subscriptions, release.Token);
        release.Cancel();
        return (await poll).IsEmpty;
    }
}
