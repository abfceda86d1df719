using System.Globalization;
using Laharsub.LoadTestClient.Load;

namespace Laharsub.LoadTestClient.Measurement;

/// <summary>One measured delivery: when its message was created and received (monotonic µs), which topic, how and by which client.</summary>
internal readonly record struct SlowDelivery(long CreatedMicroseconds, long ReceivedMicroseconds, long TopicId, TransportKind Transport, int Client)
{
    public long LatencyMicroseconds => ReceivedMicroseconds - CreatedMicroseconds;
}

/// <summary>
/// The slow deliveries of a run's measured window (--slow-log), each with its wall-clock interval, so that
/// they can be set against GC pauses and counters recorded by other processes
/// (loadtest/scripts/tail_attribution.py). Slow means at or above a fixed threshold, or, without one, the
/// window's 99th percentile, known only at the end: until then deliveries above half of the percentile
/// so far are kept, and the end drops those below the final one.
/// </summary>
internal sealed class SlowLog(long? thresholdMicroseconds)
{
    public const string Header = "created_utc_us,received_utc_us,latency_us,topic,transport,client";

    /// <summary>A bound on memory for a run whose tail is most of it; what is dropped is counted.</summary>
    private const int MaxKept = 1_000_000;

    /// <summary>How often the percentile floor is read again: a pass over the histogram costs tens of µs.</summary>
    private const int FloorEvery = 4096;

    private readonly Lock _lock = new();
    private readonly List<SlowDelivery> _kept = [];
    private long _offered;
    private long _floor = thresholdMicroseconds ?? 0;
    private long _dropped;

    /// <summary>Deliveries that were slow but not kept, once <see cref="MaxKept"/> were.</summary>
    public long Dropped => Interlocked.Read(ref _dropped);

    /// <summary>Whether the threshold is the window's 99th percentile rather than a fixed one.</summary>
    public bool ByPercentile => thresholdMicroseconds is null;

    /// <summary>A delivery of the measured window, after <paramref name="window"/> has recorded it.</summary>
    public void Offer(in SlowDelivery delivery, LatencyHistogram window)
    {
        if (thresholdMicroseconds is null && Interlocked.Increment(ref _offered) % FloorEvery == 0)
        {
            Volatile.Write(ref _floor, window.ValueAtPercentile(99) / 2);
        }
        if (delivery.LatencyMicroseconds < Volatile.Read(ref _floor))
        {
            return;
        }
        lock (_lock)
        {
            if (_kept.Count < MaxKept)
            {
                _kept.Add(delivery);
            }
            else
            {
                _dropped++;
            }
        }
    }

    /// <summary>The threshold the file is cut at: the fixed one, or the window's 99th percentile now.</summary>
    public long ThresholdMicroseconds(LatencyHistogram window) => thresholdMicroseconds ?? window.ValueAtPercentile(99);

    /// <summary>Writes the deliveries at or above <paramref name="threshold"/> in the order they were created; returns how many.</summary>
    public int Write(TextWriter writer, long threshold)
    {
        SlowDelivery[] slow;
        lock (_lock)
        {
            slow = [.. _kept.Where(d => d.LatencyMicroseconds >= threshold).OrderBy(d => d.CreatedMicroseconds)];
        }
        writer.WriteLine(Header);
        foreach (var d in slow)
        {
            writer.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{MonotonicClock.ToUnixMicroseconds(d.CreatedMicroseconds)},{MonotonicClock.ToUnixMicroseconds(d.ReceivedMicroseconds)},{d.LatencyMicroseconds},{d.TopicId},{Transports.Name(d.Transport)},{d.Client}"));
        }
        return slow.Length;
    }
}
