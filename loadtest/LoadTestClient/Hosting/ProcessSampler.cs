using System.Globalization;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>One reading of a process's resident memory and cumulative CPU time.</summary>
internal readonly record struct ProcessSample(long AtMicroseconds, long RssBytes, double CpuSeconds);

/// <summary>
/// Reads a Linux process's RSS and CPU time from /proc/PID (no tools, nothing attached to it), so
/// the server's cost can be reported next to the latency it produced.
/// </summary>
internal sealed class ProcessSampler(int pid)
{
    private static readonly double ClockTicksPerSecond = 100; // USER_HZ, 100 on every Linux ABI .NET runs on.
    private static readonly long PageSize = Environment.SystemPageSize;

    public int Pid { get; } = pid;

    public List<ProcessSample> Samples { get; } = [];

    /// <summary>Takes a sample and keeps it; null when the process is gone or /proc is not there.</summary>
    public ProcessSample? Sample(long nowMicroseconds)
    {
        var sample = Read(Pid, nowMicroseconds);
        if (sample is { } taken)
        {
            lock (Samples)
            {
                Samples.Add(taken);
            }
        }
        return sample;
    }

    public static ProcessSample? Read(int pid, long nowMicroseconds)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            // The command name (field 2) may hold spaces, so fields are counted after its ')'.
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            var cpuTicks = long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
            var statm = File.ReadAllText($"/proc/{pid}/statm").Split(' ');
            var rss = long.Parse(statm[1], CultureInfo.InvariantCulture) * PageSize;
            return new ProcessSample(nowMicroseconds, rss, cpuTicks / ClockTicksPerSecond);
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            return null;
        }
    }

    /// <summary>Samples taken within a window.</summary>
    public List<ProcessSample> Within(long fromMicroseconds, long toMicroseconds)
    {
        lock (Samples)
        {
            return Samples.Where(s => s.AtMicroseconds >= fromMicroseconds && s.AtMicroseconds <= toMicroseconds).ToList();
        }
    }
}
