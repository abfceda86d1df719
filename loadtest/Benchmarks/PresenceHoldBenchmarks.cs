using BenchmarkDotNet.Attributes;
using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;
using Laharsub.Server;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Benchmarks;

/// <summary>
/// What presence adds to each poll of an identified subscriber: the hold taken when the run starts and
/// released when it ends. <see cref="HoldAndRelease"/> is a poll whose lease was renewed recently (most
/// polls); <see cref="HoldAndReleaseRenewing"/> is one whose lease is due, so it calls the store.
/// </summary>
[MemoryDiagnoser]
public class PresenceHoldBenchmarks
{
    private readonly FakeTimeProvider _clock = new();
    private ServiceProvider _services = null!;
    private PresenceLeases _leases = null!;
    private Subscription[] _subscriptions = [];
    private readonly PresenceIdentity _member = new("lt1234", Data: null);

    [GlobalSetup]
    public void Setup()
    {
        var backend = BackendFactory.Create(_clock);
        _services = new ServiceCollection()
            .AddLogging()
            .AddMetrics()
            .AddSingleton<TimeProvider>(_clock)
            .AddSingleton<ILaharsubStore>(backend.Store)
            .AddSingleton(Options.Create(new LaharsubPresenceOptions()))
            .AddSingleton<PresenceMetrics>()
            .AddSingleton<PresenceWebhook>()
            .AddSingleton<PresenceEvents>()
            .AddSingleton<PresenceLeases>()
            .BuildServiceProvider();
        _leases = _services.GetRequiredService<PresenceLeases>();
        var topic = backend.Store.CreateTopicWithPresenceAsync().AsTask().GetAwaiter().GetResult()!;
        _subscriptions = [new Subscription(topic.TopicId, 1)];
        // The member joins once; the benchmarks renew.
        _leases.Hold(_subscriptions, _member)!.Dispose();
    }

    [GlobalCleanup]
    public void Cleanup() => _services.Dispose();

    [Benchmark(Baseline = true)]
    public void HoldAndRelease() => _leases.Hold(_subscriptions, _member)?.Dispose();

    [Benchmark]
    public void HoldAndReleaseRenewing()
    {
        _clock.Advance(_leases.RenewInterval);
        _leases.Hold(_subscriptions, _member)?.Dispose();
    }
}
