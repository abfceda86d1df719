using System.Numerics;

namespace Laharsub.LoadTestClient.Measurement;

/// <summary>
/// An HDR-style log-linear histogram of non-negative integers (microseconds here): values below
/// 2^<see cref="SubBucketBits"/> are counted exactly, and every power of two above that is split
/// into 2^(<see cref="SubBucketBits"/>-1) equal buckets, so a recorded value is known to within
/// 1/1024 of itself however large it is. Recording is one interlocked increment and is safe from
/// any number of threads; histograms merge by adding counts, which is how results from several
/// processes are combined without losing the shape of the distribution.
/// Kept rather than HdrHistogram's ConcurrentHistogram: that costs more per value uncontended, and the
/// exact sum, minimum and maximum the reports print would have to be added beside it
/// (LatencyHistogramBenchmarks, docs/performance.md "Libraries weighed").
/// </summary>
internal sealed class LatencyHistogram
{
    /// <summary>Values up to 2^11 µs are exact; above, 1024 buckets per power of two: about 0.1 % relative error.</summary>
    public const int SubBucketBits = 11;

    /// <summary>Values above this (about 73 minutes in microseconds) are counted as this value.</summary>
    public const long HighestTrackableValue = (1L << 32) - 1;

    private const int SubBucketCount = 1 << SubBucketBits;
    private const int HalfSubBucketCount = SubBucketCount / 2;
    private static readonly int BucketCount = IndexOf(HighestTrackableValue) + 1;

    private readonly long[] _counts = new long[BucketCount];
    private long _totalCount;
    private long _sum;
    private long _min = long.MaxValue;
    private long _max = long.MinValue;

    public long TotalCount => Volatile.Read(ref _totalCount);

    public long Min => TotalCount == 0 ? 0 : Volatile.Read(ref _min);

    public long Max => TotalCount == 0 ? 0 : Volatile.Read(ref _max);

    /// <summary>The exact arithmetic mean of the recorded values (clamped values count as clamped).</summary>
    public double Mean => TotalCount == 0 ? 0 : (double)Volatile.Read(ref _sum) / TotalCount;

    public void Record(long value)
    {
        value = Math.Clamp(value, 0, HighestTrackableValue);
        Interlocked.Increment(ref _counts[IndexOf(value)]);
        Interlocked.Increment(ref _totalCount);
        Interlocked.Add(ref _sum, value);
        UpdateMin(value);
        UpdateMax(value);
    }

    /// <summary>Adds another histogram's counts to this one.</summary>
    public void Add(LatencyHistogram other)
    {
        for (var i = 0; i < _counts.Length; i++)
        {
            if (other._counts[i] != 0)
            {
                Interlocked.Add(ref _counts[i], other._counts[i]);
            }
        }
        AddSummary(other.TotalCount, Volatile.Read(ref other._sum), other.Min, other.Max);
    }

    /// <summary>The population standard deviation, from bucket midpoints around the exact mean.</summary>
    public double StandardDeviation
    {
        get
        {
            var count = TotalCount;
            if (count == 0)
            {
                return 0;
            }
            var mean = Mean;
            double squares = 0;
            for (var i = 0; i < _counts.Length; i++)
            {
                var n = Volatile.Read(ref _counts[i]);
                if (n != 0)
                {
                    var deviation = Midpoint(i) - mean;
                    squares += deviation * deviation * n;
                }
            }
            return Math.Sqrt(squares / count);
        }
    }

    /// <summary>
    /// The value at a percentile (0-100): the highest value equivalent to the recorded value below
    /// which that share of values lies, clamped to the exact min and max, as HdrHistogram reports it.
    /// </summary>
    public long ValueAtPercentile(double percentile)
    {
        var count = TotalCount;
        if (count == 0)
        {
            return 0;
        }
        var target = Math.Max(1, (long)Math.Ceiling(Math.Clamp(percentile, 0, 100) / 100 * count));
        long seen = 0;
        for (var i = 0; i < _counts.Length; i++)
        {
            seen += Volatile.Read(ref _counts[i]);
            if (seen >= target)
            {
                // Read while other threads record (the progress line): a value counted before its
                // min and max were updated leaves min above max for an instant, so clamp only when sane.
                var (min, max) = (Min, Max);
                var value = HighestEquivalent(i);
                return min <= max ? Math.Clamp(value, min, max) : value;
            }
        }
        return Math.Max(0, Max);
    }

    /// <summary>Non-empty buckets as (lowest value, highest value, count), in value order.</summary>
    public IEnumerable<(long Low, long High, long Count)> Buckets()
    {
        for (var i = 0; i < _counts.Length; i++)
        {
            var n = Volatile.Read(ref _counts[i]);
            if (n != 0)
            {
                yield return (LowestEquivalent(i), HighestEquivalent(i), n);
            }
        }
    }

    /// <summary>A serialisable copy: the non-empty buckets keyed by their lowest value, plus the exact summary.</summary>
    public HistogramData ToData() => new(
        TotalCount, Volatile.Read(ref _sum), Min, Max,
        Buckets().Select(b => new[] { b.Low, b.Count }).ToArray());

    public static LatencyHistogram FromData(HistogramData data)
    {
        var histogram = new LatencyHistogram();
        foreach (var bucket in data.Buckets)
        {
            histogram._counts[IndexOf(bucket[0])] += bucket[1];
        }
        histogram.AddSummary(data.Count, data.Sum, data.Min, data.Max);
        return histogram;
    }

    internal static int IndexOf(long value)
    {
        if (value < SubBucketCount)
        {
            return (int)value;
        }
        // The power of two the value lies in decides the bucket; the bits below its top
        // SubBucketBits are dropped, which is what makes the error relative rather than absolute.
        var shift = 63 - BitOperations.LeadingZeroCount((ulong)value) - (SubBucketBits - 1);
        var subBucket = (int)(value >> shift);
        return SubBucketCount + (shift - 1) * HalfSubBucketCount + (subBucket - HalfSubBucketCount);
    }

    internal static long LowestEquivalent(int index)
    {
        if (index < SubBucketCount)
        {
            return index;
        }
        var shift = (index - SubBucketCount) / HalfSubBucketCount + 1;
        var subBucket = (index - SubBucketCount) % HalfSubBucketCount + HalfSubBucketCount;
        return (long)subBucket << shift;
    }

    internal static long HighestEquivalent(int index)
    {
        if (index < SubBucketCount)
        {
            return index;
        }
        var shift = (index - SubBucketCount) / HalfSubBucketCount + 1;
        return LowestEquivalent(index) + (1L << shift) - 1;
    }

    private static double Midpoint(int index) => (LowestEquivalent(index) + HighestEquivalent(index)) / 2.0;

    private void AddSummary(long count, long sum, long min, long max)
    {
        if (count == 0)
        {
            return;
        }
        Interlocked.Add(ref _totalCount, count);
        Interlocked.Add(ref _sum, sum);
        UpdateMin(min);
        UpdateMax(max);
    }

    private void UpdateMin(long value) => Atomic.Min(ref _min, value);

    private void UpdateMax(long value) => Atomic.Max(ref _max, value);
}

/// <summary>A histogram as it travels between processes and into the JSON results.</summary>
/// <param name="Count">Number of recorded values.</param>
/// <param name="Sum">Exact sum of the values.</param>
/// <param name="Min">Exact smallest value.</param>
/// <param name="Max">Exact largest value.</param>
/// <param name="Buckets">Non-empty buckets as [lowest value, count].</param>
internal sealed record HistogramData(long Count, long Sum, long Min, long Max, long[][] Buckets);
