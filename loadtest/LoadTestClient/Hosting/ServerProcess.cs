using System.Diagnostics;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// A .NET server of this repository (<see cref="ServerProject"/>: Laharsub's standalone host or the floor),
/// its Release build run as a separate process on a free loopback port for one run, and stopped afterwards.
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

    /// <summary>Builds <paramref name="project"/> if its Release output is missing, starts it and waits for /health.</summary>
    /// <param name="settings">Its settings for this run, after <see cref="ServerProject.Arguments"/>.</param>
    public static async Task<ServerProcess> StartAsync(ServerProject project, string repositoryRoot, IEnumerable<string> settings,
        IReadOnlyDictionary<string, string> environment, TextWriter log, CancellationToken cancellationToken, IReadOnlyList<string>? launcher = null)
    {
        var dll = project.ReleaseDll(repositoryRoot);
        if (!File.Exists(dll))
        {
            log.WriteLine($"{Path.GetRelativePath(repositoryRoot, dll)} is missing.");
            await BuildAsync(project, repositoryRoot, log, cancellationToken).ConfigureAwait(false);
        }
        var port = ChildProcess.FreeLoopbackPort();
        string[] arguments =
        [
            // Per-request logging on the console would measure the console, not the server.
            "--Logging:LogLevel:Default=Warning",
            "--Logging:LogLevel:Microsoft.Hosting.Lifetime=Warning",
            .. project.Arguments,
            .. settings,
        ];
        KeyValuePair<string, string?>[] variables =
            [new(InlineCompletionsVariable, null), .. environment.Select(e => new KeyValuePair<string, string?>(e.Key, e.Value))];
        var prefix = $"[{project.Name}] ";
        var process = ChildProcess.StartHost(dll, port, arguments, line => log.WriteLine(prefix + line), variables, launcher,
            name: "The " + project.Name);
        var shownArguments = new[] { dll, "--urls", $"http://127.0.0.1:{port}" }.Concat(arguments).Select(a => a.Replace(repositoryRoot + "/", "", StringComparison.Ordinal));
        var server = new ServerProcess(process, new Uri($"http://127.0.0.1:{port}/"))
        {
            CommandLine = string.Concat(environment.Select(e => $"{e.Key}={e.Value} ")) + string.Concat((launcher ?? []).Select(a => a + " "))
                + "dotnet " + string.Join(' ', shownArguments),
        };
        var healthy = process.WaitUntilHealthyAsync(server.BaseAddress, TimeSpan.FromSeconds(60), () => $"; see the {prefix.Trim()} lines above.", cancellationToken);
        return await ChildProcess.ReadyOrDisposedAsync(server, healthy).ConfigureAwait(false);
    }

    /// <summary>
    /// Builds <paramref name="project"/>'s Release output (incrementally: seconds when it is up to date), so
    /// that a run never measures a stale build of a server that has changed since.
    /// </summary>
    public static Task BuildAsync(ServerProject project, string repositoryRoot, TextWriter log, CancellationToken cancellationToken)
    {
        log.WriteLine($"building the {project.Name}: dotnet build {project.Directory} -c Release");
        return RunToEndAsync("dotnet", ["build", Path.Combine(repositoryRoot, project.Directory), "-c", "Release", "-nologo", "-v", "quiet"], cancellationToken);
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
