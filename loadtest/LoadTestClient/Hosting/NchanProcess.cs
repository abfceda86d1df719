using System.Globalization;
using System.Text.RegularExpressions;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// A private nginx + nchan instance for one run: loadtest/peers/nchan.conf copied into a fresh
/// temporary prefix (its pid file, temporary files and nothing else), on a free loopback port, run
/// in the foreground as this tool's child and stopped afterwards.
/// </summary>
internal sealed partial class NchanProcess : ITargetServer
{
    public const string ConfigRelativePath = "loadtest/peers/nchan.conf";
    public const string ModulePath = "/usr/lib/nginx/modules/ngx_nchan_module.so";
    public const string InstallHint = "install them with 'apt-get install -y nginx-light libnginx-mod-nchan' (Debian 12)";

    private readonly PrivateNginx _nginx;

    private NchanProcess(PrivateNginx nginx, Uri baseAddress, string commandLine)
    {
        _nginx = nginx;
        BaseAddress = baseAddress;
        CommandLine = commandLine;
    }

    public Uri BaseAddress { get; }

    public int Pid => _nginx.Process.Id;

    public bool HasWorkerProcesses => true;

    public string CommandLine { get; }

    /// <summary>Starts nginx with the repository's nchan configuration and waits until it answers /health.</summary>
    /// <param name="repositoryRoot">Where loadtest/peers/nchan.conf is.</param>
    /// <param name="pollTimeoutSeconds">nchan_subscriber_timeout: how long a poll waits before its 408.</param>
    /// <param name="log">Where nginx's output goes.</param>
    /// <param name="cancellationToken">Ends the wait for /health.</param>
    /// <param name="workerProcesses">
    /// One worker per core when null, as the configuration says (what runs measure). Tests of the wire
    /// use 1: with two workers, nchan once left a poll waiting forever for a message that another
    /// worker had taken (a clean-clone CI run hung on it), which is nchan's behaviour under load, not the tool's.
    /// </param>
    /// <exception cref="InvalidOperationException">nginx or the nchan module is missing, or nginx did not start; the message says why and what to do.</exception>
    /// <param name="launcher">A command that runs nginx, e.g. taskset to pin it (its workers inherit the mask).</param>
    public static async Task<NchanProcess> StartAsync(string repositoryRoot, int pollTimeoutSeconds, TextWriter log, CancellationToken cancellationToken,
        int? workerProcesses = null, IReadOnlyList<string>? launcher = null)
    {
        if (PrivateNginx.Find() is null)
        {
            throw new InvalidOperationException($"nginx is not installed (no nginx in /usr/sbin or on PATH), so nchan cannot be measured: {InstallHint}.");
        }
        if (!File.Exists(ModulePath))
        {
            throw new InvalidOperationException($"The nchan module {ModulePath} is missing: {InstallHint}.");
        }
        var port = ChildProcess.FreeLoopbackPort();
        var configuration = Configure(File.ReadAllText(Path.Combine(repositoryRoot, ConfigRelativePath)), port, pollTimeoutSeconds);
        if (workerProcesses is { } workers)
        {
            configuration = Replace(configuration, WorkerProcessesPattern(), $"worker_processes {workers.ToString(CultureInfo.InvariantCulture)};",
                "worker_processes auto;");
        }
        var nginx = PrivateNginx.Start([("nchan.conf", configuration)], line => log.WriteLine("[nchan] " + line), InstallHint,
            launcher, environment: [new(ServerProcess.InlineCompletionsVariable, null)]);
        var server = new NchanProcess(nginx, new Uri($"http://127.0.0.1:{port}/"),
            $"{nginx.CommandLine} ({ConfigRelativePath}, port {port}, nchan_subscriber_timeout {pollTimeoutSeconds}s"
            + (workerProcesses is { } count ? $", {count} worker(s))" : ")"));
        var healthy = nginx.Process.WaitUntilHealthyAsync(server.BaseAddress, TimeSpan.FromSeconds(30), () => "; see the [nchan] lines above.", cancellationToken);
        return await ChildProcess.ReadyOrDisposedAsync(server, healthy).ConfigureAwait(false);
    }

    /// <summary>The configuration with the port and the poll timeout of this run.</summary>
    public static string Configure(string configuration, int port, int pollTimeoutSeconds)
    {
        var configured = Replace(configuration, ListenPattern(), $"listen 127.0.0.1:{port.ToString(CultureInfo.InvariantCulture)}", "listen 127.0.0.1:PORT");
        return Replace(configured, SubscriberTimeoutPattern(), $"nchan_subscriber_timeout {pollTimeoutSeconds.ToString(CultureInfo.InvariantCulture)}s;",
            "nchan_subscriber_timeout SECONDSs;");
    }

    public ValueTask DisposeAsync() => _nginx.DisposeAsync();

    private static string Replace(string configuration, Regex pattern, string replacement, string shape)
    {
        var matches = pattern.Count(configuration);
        if (matches != 1)
        {
            throw new InvalidOperationException($"{ConfigRelativePath} must contain exactly one '{shape}' (found {matches}): the tool puts this run's value there.");
        }
        return pattern.Replace(configuration, replacement);
    }

    [GeneratedRegex(@"listen 127\.0\.0\.1:[0-9]+")]
    private static partial Regex ListenPattern();

    [GeneratedRegex(@"nchan_subscriber_timeout [0-9]+s;")]
    private static partial Regex SubscriberTimeoutPattern();

    [GeneratedRegex(@"^worker_processes [a-z0-9]+;", RegexOptions.Multiline)]
    private static partial Regex WorkerProcessesPattern();
}
