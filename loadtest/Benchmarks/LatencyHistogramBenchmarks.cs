using BenchmarkDotNet.Attributes;
using HdrHistogram;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.Benchmarks;

/// <summary>
/// What recording one delivery's latency costs the load generator: its hand-written
/// <see cref="LatencyHistogram"/> against HdrHistogram's thread-safe forms, at the same range and precision
/// (microseconds up to 2^32, three significant digits). The generator records from whichever socket
/// thread completes a poll, so each is measured from one thread and from two at once (this machine's cores).
/// </summary>
[MemoryDiagnoser]
public class LatencyHistogramBenchmarks
{
    private const int Values = 16_384;

    private readonly long[] _values = new long[Values];
    private LatencyHistogram _handWritten = null!;
    private LongConcurrentHistogram _concurrent = null!;
    private Recorder _recorder = null!;
    private ThreadLocal<LongHistogram> _perThread = null!;
    private long _sum;
    private long _min = long.MaxValue;
    private long _max = long.MinValue;

    [Params(1, 2)]
    public int Threads { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        // Latencies as a run sees them: mostly around a millisecond, a long tail to a second.
        var random = new Random(42);
        for (var i = 0; i < _values.Length; i++)
        {
            _values[i] = (long)Math.Exp(4 + random.NextDouble() * 10);
        }
        _handWritten = new LatencyHistogram();
        _concurrent = new LongConcurrentHistogram(1, LatencyHistogram.HighestTrackableValue, 3);
        _recorder = HistogramFactory.With64BitBucketSize().WithValuesUpTo(LatencyHistogram.HighestTrackableValue).WithPrecisionOf(3)
            .WithThreadSafeWrites().WithThreadSafeReads().Create();
        _perThread = new ThreadLocal<LongHistogram>(() => new LongHistogram(LatencyHistogram.HighestTrackableValue, 3), trackAllValues: true);
    }

    [GlobalCleanup]
    public void Cleanup() => _perThread.Dispose();

    [Benchmark(Baseline = true, OperationsPerInvoke = Values)]
    public void HandWritten() => Run(new HandWrittenRecord(_handWritten));

    [Benchmark(OperationsPerInvoke = Values)]
    public void HdrConcurrentHistogram() => Run(new HdrRecord(_concurrent));

    /// <summary>
    /// What replacing the tool's histogram would really cost: HdrHistogram keeps no exact sum, minimum or
    /// maximum, which the reports print, so a replacement adds them beside it as the tool does.
    /// </summary>
    [Benchmark(OperationsPerInvoke = Values)]
    public void HdrConcurrentHistogramWithExactSummary() => Run(new HdrWithSummaryRecord(this));

    [Benchmark(OperationsPerInvoke = Values)]
    public void HdrRecorder() => Run(new RecorderRecord(_recorder));

    /// <summary>
    /// A plain histogram per thread, merged when read: no interlocked operation per value. With two threads
    /// the benchmark's second thread is new at each invocation and so allocates its histogram each time
    /// (the 12 B per value): the generator's socket threads live long, so only the one-thread figure counts.
    /// </summary>
    [Benchmark(OperationsPerInvoke = Values)]
    public void HdrHistogramPerThread() => Run(new PerThreadRecord(_perThread));

    private void Run<TRecord>(TRecord record) where TRecord : struct, IRecord
    {
        if (Threads == 1)
        {
            RecordShare(record, 0, 1);
            return;
        }
        // Each thread records an interleaved share, so both hit the same buckets as deliveries do.
        var other = Task.Factory.StartNew(() => RecordShare(record, 1, 2), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        RecordShare(record, 0, 2);
        other.Wait();
    }

    private void RecordShare<TRecord>(TRecord record, int first, int step) where TRecord : struct, IRecord
    {
        var values = _values;
        for (var i = first; i < values.Length; i += step)
        {
            record.Record(values[i]);
        }
    }

    // Structs, so that each loop is specialised and the call inlined as at the generator's call site.
    private interface IRecord
    {
        void Record(long value);
    }

    private readonly struct HandWrittenRecord(LatencyHistogram histogram) : IRecord
    {
        public void Record(long value) => histogram.Record(value);
    }

    private readonly struct HdrRecord(HistogramBase histogram) : IRecord
    {
        public void Record(long value) => histogram.RecordValue(value);
    }

    private readonly struct HdrWithSummaryRecord(LatencyHistogramBenchmarks owner) : IRecord
    {
        public void Record(long value)
        {
            owner._concurrent.RecordValue(value);
            Interlocked.Add(ref owner._sum, value);
            Atomic.Min(ref owner._min, value);
            Atomic.Max(ref owner._max, value);
        }
    }

    private readonly struct RecorderRecord(Recorder recorder) : IRecord
    {
        public void Record(long value) => recorder.RecordValue(value);
    }

    private readonly struct PerThreadRecord(ThreadLocal<LongHistogram> histograms) : IRecord
    {
        public void Record(long value) => histograms.Value!.RecordValue(value);
    }
}
