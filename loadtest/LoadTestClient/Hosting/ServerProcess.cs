using System.Diagnostics;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// This repository's server (its Release build) run as a separate process on a free loopback port
/// for one run, configured like the original's tests (15 s message TTL), and stopped afterwards.
/// </summary>
internal sealed class ServerProcess : ITargetServer
{
    /// <summary>The generator's own socket tuning, which must not leak into the server it measures.</summary>
    public const string InlineCompletionsVariable = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

    private readonly ChildProcess _process;

    private ServerProcess(ChildProcess process, Uri baseAddress)
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
        TextWriter log, CancellationToken cancellationToken, IReadOnlyList<string>? launcher = null)
    {
        var dll = ChildProcess.HostDll(repositoryRoot, "Release");
        if (!File.Exists(dll))
        {
            log.WriteLine($"{Path.GetRelativePath(repositoryRoot, dll)} is missing.");
            await BuildAsync(repositoryRoot, log, cancellationToken).ConfigureAwait(false);
        }
        var port = ChildProcess.FreeLoopbackPort();
        string[] arguments =
        [
            // Per-request logging on the console would measure the console, not the server.
            "--Logging:LogLevel:Default=Warning",
            "--Logging:LogLevel:Microsoft.Hosting.Lifetime=Warning",
            // Thousands of simulated clients share one address: the per-client caps, meant for one real
            // client, would refuse them.
            "--Laharsub:Limits:MaxConnectionsPerClient=0",
            "--Laharsub:Limits:MaxWaitingPollsPerClient=0",
            .. settings,
        ];
        KeyValuePair<string, string?>[] variables =
            [new(InlineCompletionsVariable, null), .. environment.Select(e => new KeyValuePair<string, string?>(e.Key, e.Value))];
        var process = ChildProcess.StartHost(dll, port, arguments, line => log.WriteLine("[server] " + line), variables, launcher);
        var shownArguments = new[] { dll, "--urls", $"http://127.0.0.1:{port}" }.Concat(arguments).Select(a => a.Replace(repositoryRoot + "/", "", StringComparison.Ordinal));
        var server = new ServerProcess(process, new Uri($"http://127.0.0.1:{port}/"))
        {
            CommandLine = string.Concat(environment.Select(e => $"{e.Key}={e.Value} ")) + string.Concat((launcher ?? []).Select(a => a + " "))
                + "dotnet " + string.Join(' ', shownArguments),
        };
        var healthy = process.WaitUntilHealthyAsync(server.BaseAddress, TimeSpan.FromSeconds(60), () => "; see the [server] lines above.", cancellationToken);
        return await ChildProcess.ReadyOrDisposedAsync(server, healthy).ConfigureAwait(false);
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
    public static string? FindRepositoryRoot() => ChildProcess.FindRepositoryRoot(Directory.GetCurrentDirectory(), AppContext.BaseDirectory);

    public async ValueTask DisposeAsync()
    {
        // SIGTERM lets Kestrel answer waiting polls and close; kill only if it does not exit.
        await _process.StopAsync(TimeSpan.FromSeconds(15)).ConfigureAwait(false);
        _process.Dispose();
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
}
