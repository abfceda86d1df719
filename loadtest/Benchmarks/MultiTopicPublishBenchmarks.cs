using BenchmarkDotNet.Attributes;
using Laharsub.Server.Storage;

namespace Laharsub.Benchmarks;

/// <summary>
/// One 10-byte message to N topics of the in-memory store: one all-or-none <c>PublishManyAsync</c> (every
/// topic's lock held while it appends) against N <c>PublishAsync</c> calls, and the one call with an
/// idempotency key (a new key each time, recorded with the answer). Nobody polls: this is the store's
/// share of the cost. The Redis store is not measured here (this project has no Redis to start); its
/// difference is one script and one round trip against N.
/// </summary>
[MemoryDiagnoser]
public class MultiTopicPublishBenchmarks
{
    private Backend _backend = null!;
    private long[] _topics = [];
    private PublishTarget[] _targets = [];
    private long _key;

    [Params(10, 100)]
    public int Topics { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _backend = BackendFactory.Create();
        _topics = BackendFactory.CreateTopics(_backend, Topics);
        _targets = _topics.Select(id => new PublishTarget(id)).ToArray();
    }

    [Benchmark(Baseline = true)]
    public long OneCallPerTopic()
    {
        long last = 0;
        foreach (var topic in _topics)
        {
            last = _backend.Store.PublishAsync(topic, BackendFactory.TenBytes, "application/octet-stream").AsTask().GetAwaiter().GetResult().MessageId;
        }
        return last;
    }

    [Benchmark]
    public MultiPublishResult OneCallToAllTopics() =>
        _backend.Store.PublishManyAsync(_targets, BackendFactory.TenBytes, "application/octet-stream").AsTask().GetAwaiter().GetResult();

    [Benchmark]
    public MultiPublishResult OneCallToAllTopicsWithAKey() =>
        _backend.Store.PublishManyAsync(_targets, BackendFactory.TenBytes, "application/octet-stream",
            new IdempotencyKey((++_key).ToString(System.Globalization.CultureInfo.InvariantCulture), "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"))
            .AsTask().GetAwaiter().GetResult();
}
