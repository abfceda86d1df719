using System.Globalization;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// The per-process open-file limit, which bounds how many connections (so simulated clients, and
/// long polls on the server) one process can hold.
/// </summary>
internal static class FileLimits
{
    /// <summary>Descriptors a .NET process uses besides its connections (runtime, pipes, logs), with room to spare.</summary>
    public const int Reserve = 200;

    /// <summary>The soft and hard limit on open files of this process (what child processes inherit).</summary>
    public static (long Soft, long Hard) Read()
    {
        try
        {
            foreach (var line in File.ReadLines("/proc/self/limits"))
            {
                if (line.StartsWith("Max open files", StringComparison.Ordinal))
                {
                    var parts = line["Max open files".Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    return (ParseLimit(parts[0]), ParseLimit(parts[1]));
                }
            }
        }
        catch (IOException)
        {
        }
        return (long.MaxValue, long.MaxValue);
    }

    /// <summary>How many simulated clients one process can hold given its limit and its publish connections.</summary>
    public static long ClientsPerProcess(long limit, int publishConnections) => Math.Max(0, limit - Reserve - publishConnections);

    /// <summary>Connections of this tool to a server besides its clients' and publishers' (topic creation, health checks), with room to spare.</summary>
    public const int ToolConnections = 64;

    /// <summary>How many polls one server process that this tool starts can hold given its limit and the publish connections of every generator process.</summary>
    /// <remarks>
    /// On its own the server keeps a twentieth of its open-file limit for itself (src/Server/Limits/ConnectionLimitSetup.cs),
    /// room a production server needs and a load test does not: when a run needs more, this tool sets the server's
    /// <c>Kestrel:Limits:MaxConcurrentConnections</c> to what the run opens (<see cref="ServerConnectionLimit"/>), as an operator
    /// would, so that only the files open at its start (about <see cref="Reserve"/>) are left out.
    /// </remarks>
    public static long ServerClientsPerProcess(long limit, int publishConnections, int generatorProcesses) =>
        Math.Max(0, limit - Reserve - ToolConnections - (long)publishConnections * generatorProcesses);

    /// <summary>The polls a server process holds on its own settings, below which this tool leaves its connection limit alone.</summary>
    public static long ServerDefaultClientsPerProcess(long limit, int publishConnections, int generatorProcesses) =>
        Math.Max(0, limit - Reserve - Math.Max(384, limit / 20) - (long)publishConnections * generatorProcesses);

    /// <summary>Every connection a run opens to one server process: its polls, every generator process's publish connections, and this tool's own.</summary>
    public static long ServerConnectionLimit(long polls, int publishConnections, int generatorProcesses) =>
        polls + (long)publishConnections * generatorProcesses + ToolConnections;

    /// <summary>The line printed at start: the limit, how many clients fit, and how to raise it.</summary>
    public static string Describe(int generatorPublishConnections, int publishConnections, int processes, bool startsServer)
    {
        var (soft, hard) = Read();
        if (soft == long.MaxValue)
        {
            return "open-file limit: unlimited";
        }
        var text = $"open-file limit {soft} (hard {hard}): up to {ClientsPerProcess(soft, generatorPublishConnections)} clients per generator process";
        if (startsServer)
        {
            text += $", and about {ServerClientsPerProcess(soft, publishConnections, processes)} clients on each server process this tool starts";
        }
        return text + (soft < hard ? $"; 'ulimit -n {hard}' raises it" : "; the hard limit can only be raised outside this shell");
    }

    public static string HowToRaise(long soft, long hard) => soft < hard
        ? $"Raise the soft limit up to the hard limit with 'ulimit -n {hard}' in this shell before running."
        : $"The hard limit ({hard}) can be raised only by root or the container runtime: /etc/security/limits.conf (nofile), "
          + "systemd's LimitNOFILE=, or 'docker run --ulimit nofile=N:N'. Otherwise spread clients with --processes N and run "
          + "several servers (each server process is bound by the same limit).";

    private static long ParseLimit(string text) =>
        text == "unlimited" ? long.MaxValue : long.Parse(text, CultureInfo.InvariantCulture);
}
