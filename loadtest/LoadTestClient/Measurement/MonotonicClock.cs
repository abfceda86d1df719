using System.Diagnostics;

namespace Laharsub.LoadTestClient.Measurement;

/// <summary>
/// The clock every timestamp of a run is taken from. On Linux <see cref="Stopwatch.GetTimestamp"/>
/// reads CLOCK_MONOTONIC, which is one clock for the whole machine, so a timestamp written into a
/// message by one process can be compared with the time another process receives it.
/// </summary>
internal static class MonotonicClock
{
    private static readonly double MicrosecondsPerTick = 1_000_000.0 / Stopwatch.Frequency;

    /// <summary>Microseconds on the machine-wide monotonic clock.</summary>
    public static long NowMicroseconds => TicksToMicroseconds(Stopwatch.GetTimestamp());

    public static long TicksToMicroseconds(long ticks) =>
        Stopwatch.Frequency == 1_000_000_000 ? ticks / 1000 : (long)(ticks * MicrosecondsPerTick);

    // Read once, the two clocks side by side: a process's wall-clock times then keep the monotonic clock's
    // spacing, and two processes of one machine differ by the few microseconds between the two reads.
    private static readonly long UnixOffsetMicroseconds = (DateTime.UtcNow - DateTime.UnixEpoch).Ticks / 10 - NowMicroseconds;

    /// <summary>
    /// A monotonic timestamp as wall-clock UTC (microseconds since 1970), for files that another process's
    /// records (a server's GC pauses) are joined with.
    /// </summary>
    public static long ToUnixMicroseconds(long monotonicMicroseconds) => monotonicMicroseconds + UnixOffsetMicroseconds;
}
