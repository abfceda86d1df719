namespace Laharsub.LoadTestClient.Measurement;

/// <summary>Lock-free running minimum and maximum, for counters updated from many threads.</summary>
internal static class Atomic
{
    public static void Max(ref long location, long value)
    {
        var current = Volatile.Read(ref location);
        while (value > current)
        {
            var seen = Interlocked.CompareExchange(ref location, value, current);
            if (seen == current)
            {
                return;
            }
            current = seen;
        }
    }

    public static void Min(ref long location, long value)
    {
        var current = Volatile.Read(ref location);
        while (value < current)
        {
            var seen = Interlocked.CompareExchange(ref location, value, current);
            if (seen == current)
            {
                return;
            }
            current = seen;
        }
    }
}
