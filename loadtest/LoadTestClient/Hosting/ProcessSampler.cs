using System.Globalization;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>One reading of a server's resident memory and cumulative CPU time (summed over its processes).</summary>
internal readonly record struct ProcessSample(long AtMicroseconds, long RssBytes, double CpuSeconds, int Processes = 1);

/// <summary>
/// Reads a Linux server's memory and CPU time from /proc (no tools, nothing attached to it), so the
/// server's cost can be reported next to the latency it produced. A server made of a master and
/// worker processes (nginx) is read as a whole: CPU summed over all of them, and memory as the sum
/// of their proportional set sizes (PSS), so that the shared memory every nchan worker maps counts
/// once rather than once per worker; a single process's memory is its RSS.
/// </summary>
internal sealed class ProcessSampler(int pid, bool includeChildren = false)
{
    private static readonly double ClockTicksPerSecond = 100; // USER_HZ, 100 on every Linux ABI .NET runs on.
    private static readonly long PageSize = Environment.SystemPageSize;

    public int Pid { get; } = pid;

    /// <summary>Whether the children of <see cref="Pid"/> (nginx's workers) are read with it.</summary>
    public bool IncludesChildren { get; } = includeChildren;

    public List<ProcessSample> Samples { get; } = [];

    /// <summary>
    /// The reading taken before the run's clients connected (<see cref="SampleIdle"/>): what the
    /// server holds with no connection, which memory per connection is counted from.
    /// </summary>
    public ProcessSample? Idle { get; private set; }

    /// <summary>Takes the idle reading, kept apart from the run's samples.</summary>
    public void SampleIdle(long nowMicroseconds) =>
        Idle = IncludesChildren ? ReadGroup(Pid, nowMicroseconds) : Read(Pid, nowMicroseconds);

    /// <summary>Takes a sample and keeps it; null when the process is gone or /proc is not there.</summary>
    public ProcessSample? Sample(long nowMicroseconds)
    {
        var sample = IncludesChildren ? ReadGroup(Pid, nowMicroseconds) : Read(Pid, nowMicroseconds);
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
            var statm = File.ReadAllText($"/proc/{pid}/statm").Split(' ');
            var rss = long.Parse(statm[1], CultureInfo.InvariantCulture) * PageSize;
            return new ProcessSample(nowMicroseconds, rss, ReadCpu(pid));
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
        {
            return null;
        }
    }

    /// <summary>A process and its children (found by their parent pid) as one server.</summary>
    public static ProcessSample? ReadGroup(int pid, long nowMicroseconds)
    {
        try
        {
            var members = ChildrenOf(pid).Prepend(pid).ToList();
            long memory = 0;
            double cpu = 0;
            foreach (var member in members)
            {
                memory += ReadPss(member);
                cpu += ReadCpu(member);
            }
            return new ProcessSample(nowMicroseconds, memory, cpu, members.Count);
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

    private static double ReadCpu(int pid)
    {
        var stat = File.ReadAllText($"/proc/{pid}/stat");
        // The command name (field 2) may hold spaces, so fields are counted after its ')'.
        var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / ClockTicksPerSecond;
    }

    private static int ParentOf(string stat) => int.Parse(stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[1], CultureInfo.InvariantCulture);

    private static List<int> ChildrenOf(int pid)
    {
        var children = new List<int>();
        foreach (var directory in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(directory), NumberStyles.None, CultureInfo.InvariantCulture, out var candidate))
            {
                continue;
            }
            try
            {
                if (ParentOf(File.ReadAllText(Path.Combine(directory, "stat"))) == pid)
                {
                    children.Add(candidate);
                }
            }
            catch (Exception exception) when (exception is IOException or UnauthorizedAccessException)
            {
                // The process ended between listing and reading.
            }
        }
        return children;
    }

    /// <summary>Proportional set size in bytes: private pages plus each shared page divided by the processes sharing it.</summary>
    private static long ReadPss(int pid)
    {
        foreach (var line in File.ReadLines($"/proc/{pid}/smaps_rollup"))
        {
            if (line.StartsWith("Pss:", StringComparison.Ordinal))
            {
                return long.Parse(line[4..].Trim().Split(' ')[0], CultureInfo.InvariantCulture) * 1024;
            }
        }
        throw new FormatException($"/proc/{pid}/smaps_rollup has no Pss line.");
    }
}
