using System.Diagnostics;
using System.Text.RegularExpressions;
using Laharsub.LoadTestClient.Hosting;

namespace Laharsub.Testing;

/// <summary>
/// The standalone server (src/Server/Host, the build of the test's own configuration) as a separate
/// process on a free loopback port: what operators run, for tests of several instances and of crashes.
/// </summary>
public sealed class HostProcess : IAsyncDisposable
{
    private readonly ChildProcess _process;
    private readonly OutputLog _output;

    private HostProcess(ChildProcess process, Uri baseAddress, OutputLog output)
    {
        _process = process;
        BaseAddress = baseAddress;
        _output = output;
    }

    public Uri BaseAddress { get; }

    public Uri ApiAddress => new(BaseAddress, "ps/");

    /// <summary>What the server wrote, for failure messages.</summary>
    public string Output => _output.ToString();

    public bool HasExited => _process.HasExited;

    /// <summary>Starts the server with configuration <paramref name="settings"/> (key=value) and waits until /health answers.</summary>
    public static Task<HostProcess> StartAsync(params string[] settings) => StartAsync(openFileLimit: null, settings);

    /// <summary>
    /// Starts the server under an open-file limit (<c>ulimit -n</c>, which sets the soft and the hard limit,
    /// so the runtime cannot raise it at start) when <paramref name="openFileLimit"/> is given.
    /// </summary>
    public static Task<HostProcess> StartAsync(int? openFileLimit, params string[] settings) => StartAsync(openFileLimit, port: 0, settings);

    /// <summary>Starts the server on <paramref name="port"/>: a restart where a killed instance listened, at the address its clients know.</summary>
    public static Task<HostProcess> StartOnPortAsync(int port, params string[] settings) => StartAsync(openFileLimit: null, port, settings);

    private static async Task<HostProcess> StartAsync(int? openFileLimit, int port, string[] settings)
    {
        port = port == 0 ? ChildProcess.FreeLoopbackPort() : port;
        var output = new OutputLog();
        var process = ChildProcess.StartHost(HostDll(), port, settings.Select(setting => "--" + setting), output.Append,
            launcher: openFileLimit is { } limit ? ["bash", "-c", $"ulimit -n {limit} && exec \"$@\"", "bash"] : null);
        var host = new HostProcess(process, new Uri($"http://127.0.0.1:{port}/"), output);
        var healthy = process.WaitUntilHealthyAsync(host.BaseAddress, TimeSpan.FromSeconds(60), () => ":\n" + host.Output, CancellationToken.None);
        return await ChildProcess.ReadyOrDisposedAsync(host, healthy);
    }

    /// <summary>Variables that choose the server's address; removed from a child's environment unless a test sets them.</summary>
    private static readonly string[] AddressVariables =
        ["ASPNETCORE_URLS", "ASPNETCORE_HTTP_PORTS", "ASPNETCORE_HTTPS_PORTS", "DOTNET_URLS", "DOTNET_HTTP_PORTS", "DOTNET_HTTPS_PORTS"];

    /// <summary>
    /// Starts <paramref name="command"/> (a build of the server: <c>dotnet HOST.dll ...</c>, a published
    /// executable, or either behind a launcher) with no address added by the tests: its arguments and
    /// <paramref name="environment"/> choose it, as an operator's would. Waits until /health answers at
    /// <paramref name="baseAddress"/>, or, when that is null (a server the tests cannot reach directly),
    /// returns once the process is started.
    /// </summary>
    public static async Task<HostProcess> StartCommandAsync(IReadOnlyList<string> command, Uri? baseAddress,
        IReadOnlyDictionary<string, string?>? environment = null, string? workingDirectory = null)
    {
        var output = new OutputLog();
        var variables = AddressVariables.ToDictionary(name => name, _ => (string?)null);
        foreach (var (name, value) in environment ?? new Dictionary<string, string?>())
        {
            variables[name] = value;
        }
        var process = ChildProcess.Start("The server", command[0], command.Skip(1), output.Append, workingDirectory: workingDirectory ?? Path.GetDirectoryName(HostDll()), environment: variables);
        var host = new HostProcess(process, baseAddress ?? new Uri("http://localhost/"), output);
        if (baseAddress is null)
        {
            return host;
        }
        var healthy = process.WaitUntilHealthyAsync(baseAddress, TimeSpan.FromSeconds(60), () => ":\n" + host.Output, CancellationToken.None);
        return await ChildProcess.ReadyOrDisposedAsync(host, healthy);
    }

    /// <summary>A loopback port that nothing listens on now.</summary>
    public static int FreeLoopbackPort() => ChildProcess.FreeLoopbackPort();

    /// <summary>The process id of what was started (after a launcher's <c>exec</c>, the server's own).</summary>
    public int ProcessId => _process.Id;

    /// <summary>The standalone server's dll that these tests run (see <see cref="HostDll"/>).</summary>
    public static string BuiltHostDll => HostDll();

    /// <summary>
    /// Runs the standalone server's executable with <paramref name="arguments"/> (a command such as <c>token</c>)
    /// and <paramref name="environment"/> added to its environment, and returns what it wrote; bounded by 60 s.
    /// </summary>
    public static async Task<CommandRun> RunCommandAsync(IEnumerable<string> arguments, IReadOnlyDictionary<string, string?>? environment = null)
    {
        var dll = HostDll();
        var start = new ProcessStartInfo("dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = Path.GetDirectoryName(dll)!,
        };
        start.ArgumentList.Add(dll);
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        foreach (var (name, value) in environment ?? new Dictionary<string, string?>())
        {
            start.Environment[name] = value;
        }
        using var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet could not be started.");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var output = process.StandardOutput.ReadToEndAsync(timeout.Token);
        var error = process.StandardError.ReadToEndAsync(timeout.Token);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill();
            throw new TimeoutException($"dotnet {string.Join(' ', start.ArgumentList)} did not finish within 60 s.");
        }
        return new CommandRun(process.ExitCode, await output, await error);
    }

    /// <summary>What a command wrote and how it ended.</summary>
    public sealed record CommandRun(int ExitCode, string Output, string Error);

    /// <summary>Waits, within <paramref name="timeout"/>, for output matching <paramref name="pattern"/>.</summary>
    public async Task<Match> WaitForOutputAsync(Regex pattern, TimeSpan timeout)
    {
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            if (pattern.Match(Output) is { Success: true } match)
            {
                return match;
            }
            if (deadline.Elapsed > timeout)
            {
                throw new TimeoutException($"The server did not write /{pattern}/ within {timeout}:\n{Output}");
            }
            // Re-checks output that arrives on another thread; not a race to win.
            await Task.Delay(20);
        }
    }

    /// <summary>Kills the server at once (SIGKILL): no graceful answers, connections just drop.</summary>
    public Task KillAsync() => _process.KillAsync(TimeSpan.FromSeconds(15));

    /// <summary>Stops the server as an operator would (SIGTERM), bounded by 30 s.</summary>
    /// <exception cref="TimeoutException">It had not exited after 30 s.</exception>
    public async Task StopAsync()
    {
        if (!await _process.TerminateAsync(TimeSpan.FromSeconds(30)))
        {
            throw new TimeoutException($"The server did not exit within 30 s of SIGTERM:\n{Output}");
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _process.StopAsync(TimeSpan.FromSeconds(30));
        _process.Dispose();
    }

    /// <summary>
    /// The host built in the same configuration as the running tests (test.sh builds the solution in Release),
    /// or the one <c>LAHARSUB_HOST_DLL</c> names, e.g. a build from before a fix, to see a regression test fail on it.
    /// </summary>
    private static string HostDll()
    {
        if (Environment.GetEnvironmentVariable("LAHARSUB_HOST_DLL") is { Length: > 0 } chosen)
        {
            return chosen;
        }
        var configuration = AppContext.BaseDirectory.Contains("/Debug/", StringComparison.Ordinal) ? "Debug" : "Release";
        var repository = ChildProcess.FindRepositoryRoot(AppContext.BaseDirectory)
            ?? throw new InvalidOperationException("The repository root (Laharsub.sln) was not found above " + AppContext.BaseDirectory);
        var dll = ChildProcess.HostDll(repository, configuration);
        return File.Exists(dll) ? dll
            : throw new InvalidOperationException($"{dll} is missing: build the solution first (dotnet build Laharsub.sln -c {configuration}).");
    }
}
