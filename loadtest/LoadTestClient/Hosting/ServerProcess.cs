using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// This repository's server (its Release build) run as a separate process on a free loopback port
/// for one run, configured like the original's tests (15 s message TTL), and stopped afterwards.
/// </summary>
internal sealed partial class ServerProcess : ITargetServer
{
    private const string DllRelativePath = "src/Server/Host/bin/Release/net10.0/Laharsub.Server.Host.dll";
    private const int SigTerm = 15;

    /// <summary>The generator's own socket tuning, which must not leak into the server it measures.</summary>
    public const string InlineCompletionsVariable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

    private readonly Process _process;

    private ServerProcess(Process process, Uri baseAddress)
    {
        _process = process;
        BaseAddress = baseAddress;
    }

    public Uri BaseAddress { get; }

    public Uri ApiAddress => new(BaseAddress, "ps/");

    public int Pid => _process.Id;

    /// <summary>One process holds the whole server.</summary>
    public bool HasWorkerProcesses => false;

    /// <summary>The server's command line, for the report.</summary>
    public string CommandLine { get; private init; } = "";

    /// <summary>Builds the server if its Release output is missing, starts it and waits for /health.</summary>
    public static async Task<ServerProcess> StartAsync(string repositoryRoot, IEnumerable<string> settings, IReadOnlyDictionary<string, string> environment,
        TextWriter log, CancellationToken cancellationToken)
    {
        var dll = Path.Combine(repositoryRoot, DllRelativePath);
        if (!File.Exists(dll))
        {
            log.WriteLine($"{DllRelativePath} is missing.");
            await BuildAsync(repositoryRoot, log, cancellationToken).ConfigureAwait(false);
        }
        var port = FreeLoopbackPort();
        var start = new ProcessStartInfo("dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = Path.GetDirectoryName(dll)!,
        };
        start.Environment.Remove(InlineCompletionsVariable);
        foreach (var (name, value) in environment)
        {
            start.Environment[name] = value;
        }
        string[] arguments =
        [
            dll, "--urls", $"http://127.0.0.1:{port}",
            // Per-request logging on the console would measure the console, not the server.
            "--Logging:LogLevel:Default=Warning",
            "--Logging:LogLevel:Microsoft.Hosting.Lifetime=Warning",
            // Thousands of simulated clients share one address: the per-client caps, meant for one real
            // client, would refuse them.
            "--Laharsub:Limits:MaxConnectionsPerClient=0",
            "--Laharsub:Limits:MaxWaitingPollsPerClient=0",
            .. settings,
        ];
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        var process = Process.Start(start) ?? throw new InvalidOperationException("Could not start dotnet for the server.");
        // Drain its output so a chatty server never blocks on a full pipe.
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) log.WriteLine("[server] " + e.Data); };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) log.WriteLine("[server] " + e.Data); };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var server = new ServerProcess(process, new Uri($"http://127.0.0.1:{port}/"))
        {
            CommandLine = string.Concat(environment.Select(e => $"{e.Key}={e.Value} ")) + "dotnet " + string.Join(' ', arguments.Select(a => a.Replace(repositoryRoot + "/", "", StringComparison.Ordinal))),
        };
        try
        {
            await server.WaitHealthyAsync(TimeSpan.FromSeconds(60), cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await server.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return server;
    }

    /// <summary>
    /// Builds the server's Release output (incrementally: seconds when it is up to date), so that a run
    /// never measures a stale build of a server that has changed since.
    /// </summary>
    public static Task BuildAsync(string repositoryRoot, TextWriter log, CancellationToken cancellationToken)
    {
        log.WriteLine("building the server: dotnet build src/Server/Host -c Release");
        return RunToEndAsync("dotnet", ["build", Path.Combine(repositoryRoot, "src/Server/Host"), "-c", "Release", "-nologo", "-v", "quiet"], cancellationToken);
    }

    /// <summary>The directory holding Laharsub.sln, searched upwards from here and from the tool's own location.</summary>
    public static string? FindRepositoryRoot()
    {
        foreach (var start in new[] { Directory.GetCurrentDirectory(), AppContext.BaseDirectory })
        {
            for (var directory = new DirectoryInfo(start); directory is not null; directory = directory.Parent)
            {
                if (File.Exists(Path.Combine(directory.FullName, "Laharsub.sln")))
                {
                    return directory.FullName;
                }
            }
        }
        return null;
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            // SIGTERM lets Kestrel answer waiting polls and close; kill only if it does not exit.
            _ = SendSignal(_process.Id, SigTerm);
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(15));
            try
            {
                await _process.WaitForExitAsync(timeout.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                _process.Kill(entireProcessTree: true);
                await _process.WaitForExitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
            }
        }
        _process.Dispose();
    }

    private async Task WaitHealthyAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var client = new HttpClient { BaseAddress = BaseAddress, Timeout = TimeSpan.FromSeconds(5) };
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"The server exited at start with code {_process.ExitCode}; see the [server] lines above.");
            }
            try
            {
                using var response = await client.GetAsync("health", cancellationToken).ConfigureAwait(false);
                if (response.IsSuccessStatusCode)
                {
                    return;
                }
            }
            catch (HttpRequestException)
            {
            }
            catch (TaskCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
            }
            if (deadline.Elapsed > timeout)
            {
                throw new TimeoutException($"The server did not answer /health within {timeout.TotalSeconds:0} s.");
            }
            await Task.Delay(100, cancellationToken).ConfigureAwait(false);
        }
    }

    internal static int FreeLoopbackPort()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }

    private static async Task RunToEndAsync(string file, string[] arguments, CancellationToken cancellationToken)
    {
        var start = new ProcessStartInfo(file) { UseShellExecute = false, RedirectStandardOutput = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        using var process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {file}.");
        var output = await process.StandardOutput.ReadToEndAsync(cancellationToken).ConfigureAwait(false);
        await process.WaitForExitAsync(cancellationToken).ConfigureAwait(false);
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"'{file} {string.Join(' ', arguments)}' failed with exit code {process.ExitCode}:{Environment.NewLine}{output}");
        }
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    internal static partial int SendSignal(int pid, int signal);
}
