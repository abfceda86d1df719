using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;

namespace Laharsub.Testing;

/// <summary>
/// The standalone server (src/Server/Host, the build of the test's own configuration) as a separate
/// process on a free loopback port: what operators run, for tests of several instances and of crashes.
/// </summary>
public sealed partial class HostProcess : IAsyncDisposable
{
    private const int SigKill = 9;
    private const int SigTerm = 15;
    private readonly Process _process;
    private readonly System.Text.StringBuilder _output = new();

    private HostProcess(Process process, Uri baseAddress)
    {
        _process = process;
        BaseAddress = baseAddress;
    }

    public Uri BaseAddress { get; }

    public Uri ApiAddress => new(BaseAddress, "ps/");

    /// <summary>What the server wrote, for failure messages.</summary>
    public string Output { get { lock (_output) { return _output.ToString(); } } }

    public bool HasExited => _process.HasExited;

    /// <summary>Starts the server with configuration <paramref name="settings"/> (key=value) and waits until /health answers.</summary>
    public static Task<HostProcess> StartAsync(params string[] settings) => StartAsync(openFileLimit: null, settings);

    /// <summary>
    /// Starts the server under an open-file limit (<c>ulimit -n</c>, which sets the soft and the hard limit,
    /// so the runtime cannot raise it at start) when <paramref name="openFileLimit"/> is given.
    /// </summary>
    public static async Task<HostProcess> StartAsync(int? openFileLimit, params string[] settings)
    {
        var dll = HostDll();
        var port = RedisServer.FreePort();
        var start = new ProcessStartInfo(openFileLimit is null ? "dotnet" : "bash")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = Path.GetDirectoryName(dll)!,
        };
        if (openFileLimit is { } limit)
        {
            foreach (var argument in new[] { "-c", $"ulimit -n {limit} && exec dotnet \"$@\"", "bash" })
            {
                start.ArgumentList.Add(argument);
            }
        }
        start.ArgumentList.Add(dll);
        start.ArgumentList.Add("--urls");
        start.ArgumentList.Add($"http://127.0.0.1:{port}");
        foreach (var setting in settings)
        {
            start.ArgumentList.Add("--" + setting);
        }
        var process = Process.Start(start) ?? throw new InvalidOperationException("dotnet could not be started for the server.");
        var host = new HostProcess(process, new Uri($"http://127.0.0.1:{port}/"));
        process.OutputDataReceived += (_, e) => host.Append(e.Data);
        process.ErrorDataReceived += (_, e) => host.Append(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(2) };
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(60);
        while (true)
        {
            if (process.HasExited)
            {
                // HasExited can turn true before the last lines (the reason it stopped) are read: wait
                // for the end of both streams, bounded, so that the message includes them.
                await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(10));
                throw new InvalidOperationException($"The server exited at start with code {process.ExitCode}:\n{host.Output}");
            }
            try
            {
                using var response = await http.GetAsync(new Uri(host.BaseAddress, "health"));
                if (response.IsSuccessStatusCode)
                {
                    return host;
                }
            }
            catch (Exception) when (DateTime.UtcNow < deadline)
            {
            }
            if (DateTime.UtcNow >= deadline)
            {
                await host.DisposeAsync();
                throw new TimeoutException($"The server did not answer /health within 60 s:\n{host.Output}");
            }
            await Task.Delay(100);
        }
    }

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
    public async Task KillAsync()
    {
        if (!_process.HasExited)
        {
            _ = Kill(_process.Id, SigKill);
            await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(15));
        }
    }

    /// <summary>Stops the server as an operator would (SIGTERM), bounded by 30 s.</summary>
    public async Task StopAsync()
    {
        if (!_process.HasExited)
        {
            _ = Kill(_process.Id, SigTerm);
            await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(30));
        }
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await StopAsync();
        }
        catch (TimeoutException)
        {
            await KillAsync();
        }
        _process.Dispose();
    }

    private void Append(string? line)
    {
        if (line is not null)
        {
            lock (_output)
            {
                _output.AppendLine(line);
            }
        }
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
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "Laharsub.sln")))
            {
                var dll = Path.Combine(directory.FullName, "src/Server/Host/bin", configuration, "net10.0/Laharsub.Server.Host.dll");
                return File.Exists(dll) ? dll
                    : throw new InvalidOperationException($"{dll} is missing: build the solution first (dotnet build Laharsub.sln -c {configuration}).");
            }
        }
        throw new InvalidOperationException("The repository root (Laharsub.sln) was not found above " + AppContext.BaseDirectory);
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
