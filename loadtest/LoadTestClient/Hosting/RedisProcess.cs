namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// A private redis-server (Debian's package) for one run of several server processes: a free
/// loopback port, a temporary directory of its own, no snapshots and no append-only file (so that
/// nothing but the servers' traffic costs its CPU), killed at the end.
/// </summary>
internal sealed class RedisProcess : IAsyncDisposable
{
    public const string InstallHint = "install it with 'apt-get install -y redis-server' (./test.sh does), or give a running one with --redis HOST:PORT";

    private readonly ChildProcess _process;
    private readonly string _directory;

    private RedisProcess(ChildProcess process, string directory, int port, string commandLine)
    {
        _process = process;
        _directory = directory;
        Port = port;
        CommandLine = commandLine;
    }

    public int Port { get; }

    public int Pid => _process.Id;

    /// <summary>What the servers are given as <c>Laharsub:Redis:Configuration</c>.</summary>
    public string Configuration => $"127.0.0.1:{Port}";

    public string CommandLine { get; }

    /// <exception cref="InvalidOperationException">redis-server is missing or did not start; the message says what to do.</exception>
    public static async Task<RedisProcess> StartAsync(TextWriter log, CancellationToken cancellationToken)
    {
        var port = ChildProcess.FreeLoopbackPort();
        var directory = Directory.CreateTempSubdirectory("laharsub-loadtest-redis-").FullName;
        string[] arguments = ["--port", port.ToString(System.Globalization.CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--dir", directory,
            "--save", "", "--appendonly", "no", "--daemonize", "no"];
        ChildProcess process;
        try
        {
            // Redis logs a few lines on standard output at start: only drained.
            process = ChildProcess.Start("redis-server", "redis-server", arguments, line => log.WriteLine("[redis] " + line), standardOutput: false,
                installHint: InstallHint);
        }
        catch (InvalidOperationException)
        {
            Directory.Delete(directory, recursive: true);
            throw;
        }
        var redis = new RedisProcess(process, directory, port, "redis-server " + string.Join(' ', arguments.Select(a => a.Length == 0 ? "''" : a)));
        var listening = process.WaitUntilListeningAsync(port, TimeSpan.FromSeconds(15), () => $" (port {port}); see the [redis] lines above.", cancellationToken);
        return await ChildProcess.ReadyOrDisposedAsync(redis, listening).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        // Nothing in it is kept: no reason to wait for a clean shutdown.
        await _process.KillAsync(TimeSpan.FromSeconds(15)).ConfigureAwait(false);
        _process.Dispose();
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}
