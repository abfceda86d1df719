using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTest.Tests;

/// <summary>The histogram reports what was recorded to within its stated precision, and merges without loss.</summary>
public sealed class LatencyHistogramTests
{
    [Fact]
    public void PercentilesMatchTheExactValuesToWithinATenthOfAPercent()
    {
        var random = new Random(42);
        var values = Enumerable.Range(0, 100_000).Select(_ => (long)(Math.Exp(random.NextDouble() * 14))).ToArray();
        var histogram = new LatencyHistogram();
        foreach (var value in values)
        {
            histogram.Record(value);
        }
        Array.Sort(values);

        foreach (var percentile in new[] { 50.0, 90, 99, 99.9 })
        {
            var exact = values[(int)Math.Ceiling(percentile / 100 * values.Length) - 1];
            var reported = histogram.ValueAtPercentile(percentile);
            Assert.InRange(reported, exact, exact + Math.Max(1, exact / 1000));
        }
        Assert.Equal(values[0], histogram.Min);
        Assert.Equal(values[^1], histogram.Max);
        Assert.Equal(values.Average(), histogram.Mean, 6);
        var deviation = Math.Sqrt(values.Average(v => Math.Pow(v - values.Average(), 2)));
        Assert.InRange(histogram.StandardDeviation, deviation * 0.998, deviation * 1.002);
    }

    [Fact]
    public void APercentileIsTheNearestRankRoundedUpSoItIsNeverBelowThatShareOfValues()
    {
        // 90 % of 17 values is 15.3 values: the 16th value is the lowest with at least 90 % at or below it.
        // (HdrHistogram.NET rounds the rank to the nearest, 15, and would report a value that only 88 % reach.)
        var histogram = new LatencyHistogram();
        for (var value = 1; value <= 17; value++)
        {
            histogram.Record(value * 100);
        }

        Assert.Equal(1600, histogram.ValueAtPercentile(90));
        Assert.Equal(900, histogram.ValueAtPercentile(50));
        Assert.Equal(1700, histogram.ValueAtPercentile(99));
        Assert.Equal(100, histogram.ValueAtPercentile(0));
    }

    [Fact]
    public void MergedHistogramsEqualOneHistogramOfAllValues()
    {
        var all = new LatencyHistogram();
        var parts = new[] { new LatencyHistogram(), new LatencyHistogram() };
        for (var value = 0L; value < 50_000; value += 7)
        {
            all.Record(value * 3);
            parts[value % 2].Record(value * 3);
        }
        var merged = new LatencyHistogram();
        foreach (var part in parts)
        {
            merged.Add(LatencyHistogram.FromData(part.ToData()));
        }

        Assert.Equal(all.ToData().Buckets.SelectMany(b => b), merged.ToData().Buckets.SelectMany(b => b));
        Assert.Equal((all.TotalCount, all.Min, all.Max, all.Mean), (merged.TotalCount, merged.Min, merged.Max, merged.Mean));
    }

    [Fact]
    public void EveryValueFallsInABucketThatContainsIt()
    {
        foreach (var value in new long[] { 0, 1, 2047, 2048, 2049, 4095, 4096, 1_000_000, LatencyHistogram.HighestTrackableValue })
        {
            var index = LatencyHistogram.IndexOf(value);
            Assert.InRange(value, LatencyHistogram.LowestEquivalent(index), LatencyHistogram.HighestEquivalent(index));
        }
    }
}
