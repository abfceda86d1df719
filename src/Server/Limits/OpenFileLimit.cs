using System.Runtime.InteropServices;

namespace Laharsub.Server.Limits;

/// <summary>The process's open-file limit (<c>ulimit -n</c>, RLIMIT_NOFILE) and how many files it has open.</summary>
internal static partial class OpenFileLimit
{
    /// <summary>The soft limit, or null where there is none to respect (Windows, unlimited, unreadable).</summary>
    public static long? Current()
    {
        if (!OperatingSystem.IsLinux() && !OperatingSystem.IsMacOS() && !OperatingSystem.IsFreeBSD())
        {
            return null;
        }
        // RLIMIT_NOFILE is 7 on Linux and 8 on the BSDs (macOS included); rlim_t is 64 bits on both.
        var resource = OperatingSystem.IsLinux() ? 7 : 8;
        if (GetResourceLimit(resource, out var limit) != 0 || limit.Current > int.MaxValue)
        {
            return null;
        }
        return (long)limit.Current;
    }

    /// <summary>Files (sockets, pipes, mapped assemblies) open right now, or null where that cannot be listed.</summary>
    public static int? OpenNow()
    {
        foreach (var directory in new[] { "/proc/self/fd", "/dev/fd" })
        {
            try
            {
                // The listing itself opens one descriptor, which is also counted: a harmless overestimate.
                return Directory.EnumerateFileSystemEntries(directory).Count();
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
            }
        }
        return null;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct ResourceLimit
    {
        public ulong Current;
        public ulong Maximum;
    }

    [LibraryImport("libc", EntryPoint = "getrlimit")]
    private static partial int GetResourceLimit(int resource, out ResourceLimit limit);
}
