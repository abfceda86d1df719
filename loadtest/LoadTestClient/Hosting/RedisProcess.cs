using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// A private redis-server (Debian's package) for one run of several server processes: a free
/// loopback port, a temporary directory of its own, no snapshots and no append-only file (so that
/// nothing but the servers' traffic costs its CPU), killed at the end.
/// </summary>
internal sealed class RedisProcess : IAsyncDisposable
{
    public const string InstallHint = "install it with 'apt-get install -y redis-server' (./test.sh does), or give a running one with --redis HOST:PORT";

    private readonly Process _process;
    private readonly string _directory;

    private RedisProcess(Process process, string directory, int port, string commandLine)
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
        var port = ServerProcess.FreeLoopbackPort();
        var directory = Directory.CreateTempSubdirectory("laharsub-loadtest-redis-").FullName;
        string[] arguments = ["--port", port.ToString(System.Globalization.CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--dir", directory,
            "--save", "", "--appendonly", "no", "--daemonize", "no"];
        var start = new ProcessStartInfo("redis-server") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new InvalidOperationException("Could not start redis-server.");
        }
        catch (System.ComponentModel.Win32Exception exception)
        {
            Directory.Delete(directory, recursive: true);
            throw new InvalidOperationException($"redis-server could not be started ({exception.Message}): {InstallHint}.", exception);
        }
        // Redis logs a few lines at start; only drained, so that a full pipe never blocks it.
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) log.WriteLine("[redis] " + e.Data); };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var redis = new RedisProcess(process, directory, port, "redis-server " + string.Join(' ', arguments.Select(a => a.Length == 0 ? "''" : a)));
        try
        {
            await redis.WaitListeningAsync(TimeSpan.FromSeconds(15), cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await redis.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return redis;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            // Nothing in it is kept: no reason to wait for a clean shutdown.
            _process.Kill();
            await _process.WaitForExitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(15)).ConfigureAwait(false);
        }
        _process.Dispose();
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private async Task WaitListeningAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"redis-server exited at start with code {_process.ExitCode} (port {Port}); see the [redis] lines above.");
            }
            try
            {
                using var client = new TcpClient();
                await client.ConnectAsync(IPAddress.Loopback, Port, cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(1), cancellationToken).ConfigureAwait(false);
                return;
            }
            catch (Exception exception) when (exception is SocketException or TimeoutException && deadline.Elapsed < timeout)
            {
            }
            if (deadline.Elapsed > timeout)
            {
                throw new TimeoutException($"redis-server did not listen on 127.0.0.1:{Port} within {timeout.TotalSeconds:0} s.");
            }
            await Task.Delay(50, cancellationToken).ConfigureAwait(false);
        }
    }
}
