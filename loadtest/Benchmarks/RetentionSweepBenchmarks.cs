using BenchmarkDotNet.Attributes;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Benchmarks;

/// <summary>N topics holding 10 messages each, on a clock the benchmark moves to expire them.</summary>
public abstract class RetentionFixture
{
    private const int MessagesPerTopic = 10;
    private readonly FakeTimeProvider _clock = new();
    private long[] _topics = [];

    [Params(1_000, 10_000)]
    public int Topics { get; set; }

    private protected Backend Backend { get; private set; } = null!;

    [GlobalSetup]
    public void Setup()
    {
        Backend = BackendFactory.Create(_clock);
        _topics = BackendFactory.CreateTopics(Backend, Topics);
        Fill();
    }

    protected void Fill()
    {
        foreach (var topic in _topics)
        {
            for (var i = 0; i < MessagesPerTopic; i++)
            {
                Backend.PublishAsync(topic, BackendFactory.TenBytes, "application/octet-stream").AsTask().GetAwaiter().GetResult();
            }
        }
    }

    protected void Expire() => _clock.Advance(TimeSpan.FromMinutes(1));
}

/// <summary>The retention sweep's steady state (every second by default): a pass over all topics that finds nothing expired.</summary>
[MemoryDiagnoser]
public class RetentionSweepBenchmarks : RetentionFixture
{
    [Benchmark]
    public void SweepNothingExpired() => Backend.Store.Sweep();
}

/// <summary>A sweep that drops every message; one per iteration, the messages refilled and expired before each.</summary>
[MemoryDiagnoser]
[InvocationCount(1)]
public class RetentionExpiryBenchmarks : RetentionFixture
{
    [IterationSetup]
    public void Refill()
    {
        Fill();
        Expire();
    }

    [Benchmark]
    public void SweepAllExpired() => Backend.Store.Sweep();
}
