using System.Globalization;
using System.Runtime.InteropServices;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// Pins processes to cores, so that a server measured on one core has a generator that does not share
/// it: the server this tool starts runs under <c>taskset -c LIST</c> (every thread it ever creates
/// inherits the mask), and this tool pins each of its own threads at start.
/// </summary>
internal static partial class CpuAffinity
{
    /// <summary>
    /// The cores of a taskset-style list ("0", "1-3", "0,2"), or null with the reason it is refused:
    /// each core must exist on this machine.
    /// </summary>
    public static int[]? Parse(string list, out string? problem)
    {
        var cores = new SortedSet<int>();
        foreach (var part in list.Split(','))
        {
            var bounds = part.Split('-');
            if (bounds.Length > 2 || !bounds.All(b => int.TryParse(b, NumberStyles.None, CultureInfo.InvariantCulture, out _)))
            {
                problem = $"'{list}' is not a list of cores such as 0, 1-3 or 0,2";
                return null;
            }
            var first = int.Parse(bounds[0], CultureInfo.InvariantCulture);
            var last = int.Parse(bounds[^1], CultureInfo.InvariantCulture);
            if (last < first)
            {
                problem = $"'{part}' in '{list}' runs backwards: write the lower core first";
                return null;
            }
            for (var core = first; core <= last; core++)
            {
                cores.Add(core);
            }
        }
        if (cores.Max >= Environment.ProcessorCount)
        {
            problem = $"'{list}' names core {cores.Max}, but this machine has cores 0-{Environment.ProcessorCount - 1}";
            return null;
        }
        problem = null;
        return [.. cores];
    }

    /// <summary>The command that runs the rest of a command line on <paramref name="cores"/>.</summary>
    public static IReadOnlyList<string> Launcher(IReadOnlyCollection<int> cores) =>
        ["taskset", "-c", string.Join(',', cores.Select(c => c.ToString(CultureInfo.InvariantCulture)))];

    /// <summary>
    /// Pins every thread of this process to <paramref name="cores"/>. Linux keeps an affinity mask per
    /// thread, and new threads (and child processes, such as --processes workers) inherit their creator's,
    /// so pinning the threads that exist now pins everything after.
    /// </summary>
    /// <exception cref="InvalidOperationException">The kernel refused; the message says which thread and why.</exception>
    public static void PinThisProcess(IReadOnlyCollection<int> cores)
    {
        if (!OperatingSystem.IsLinux())
        {
            throw new InvalidOperationException("--client-cpus pins threads with Linux's sched_setaffinity; on another system, start the tool under your system's own pinning command.");
        }
        var mask = new ulong[(Environment.ProcessorCount + 63) / 64];
        foreach (var core in cores)
        {
            mask[core / 64] |= 1UL << (core % 64);
        }
        foreach (var task in Directory.GetDirectories("/proc/self/task"))
        {
            var thread = int.Parse(Path.GetFileName(task), CultureInfo.InvariantCulture);
            if (SchedSetAffinity(thread, (nuint)(mask.Length * sizeof(ulong)), mask) != 0)
            {
                var error = Marshal.GetLastPInvokeError();
                // A thread that ended between listing and pinning (ESRCH) needs no pinning.
                if (error != 3)
                {
                    throw new InvalidOperationException($"sched_setaffinity refused thread {thread} (errno {error}).");
                }
            }
        }
    }

    [LibraryImport("libc", EntryPoint = "sched_setaffinity", SetLastError = true)]
    private static partial int SchedSetAffinity(int pid, nuint size, ulong[] mask);
}
