using System.Collections.Concurrent;
using System.Diagnostics;
using System.Reflection;
using System.Text.RegularExpressions;

namespace Laharsub.Server.Tests.Support;

/// <summary>
/// The built standalone server (<c>src/Server/Host</c>, the DLL operators run) as a process of its own,
/// started under a chosen open-file limit (<c>ulimit -n</c>) on a loopback port it picks itself.
/// <c>LAHARSUB_HOST_DLL</c> may name another build, e.g. one from before a fix, to check that a test fails on it.
/// </summary>
public sealed partial class HostProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly ConcurrentQueue<string> _output = new();

    private HostProcess(Process process)
    {
        _process = process;
    }

    public Uri BaseAddress { get; private set; } = null!;

    public int Port => BaseAddress.Port;

    public bool HasExited => _process.HasExited;

    /// <summary>Everything the server wrote so far, stdout and stderr.</summary>
    public string Output => string.Join(Environment.NewLine, _output);

    public static async Task<HostProcess> StartAsync(int openFileLimit, params string[] settings)
    {
        var dll = Environment.GetEnvironmentVariable("LAHARSUB_HOST_DLL") is { Length: > 0 } other ? other : BuiltHostDll();
        Assert.True(File.Exists(dll), $"{dll} is missing: build the server first (dotnet build src/Server/Host -c {Configuration}).");
        var start = new ProcessStartInfo("bash")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = Path.GetDirectoryName(dll)!,
        };
        // ulimit -n sets the soft and the hard limit, so the runtime cannot raise it again at start.
        foreach (var argument in new[] { "-c", $"ulimit -n {openFileLimit} && exec dotnet \"$@\"", "bash", dll, "--urls", "http://127.0.0.1:0" }.Concat(settings))
        {
            start.ArgumentList.Add(argument);
        }
        var process = Process.Start(start) ?? throw new InvalidOperationException("Could not start bash for the server.");
        var host = new HostProcess(process);
        process.OutputDataReceived += (_, e) => { if (e.Data is not null) host._output.Enqueue(e.Data); };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) host._output.Enqueue(e.Data); };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            var listening = await host.WaitForOutputAsync(ListeningOn(), TimeSpan.FromSeconds(60));
            host.BaseAddress = new Uri(listening.Groups["address"].Value.TrimEnd('/') + "/");
        }
        catch
        {
            await host.DisposeAsync();
            throw;
        }
        return host;
    }

    /// <summary>Waits, within <paramref name="timeout"/>, for a line of output matching <paramref name="pattern"/>.</summary>
    public async Task<Match> WaitForOutputAsync(Regex pattern, TimeSpan timeout)
    {
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            foreach (var line in _output)
            {
                if (pattern.Match(line) is { Success: true } match)
                {
                    return match;
                }
            }
            if (_process.HasExited && deadline.Elapsed > TimeSpan.FromSeconds(1))
            {
                throw new Xunit.Sdk.XunitException($"The server exited with code {_process.ExitCode} before writing /{pattern}/:{Environment.NewLine}{Output}");
            }
            if (deadline.Elapsed > timeout)
            {
                throw new TimeoutException($"The server did not write /{pattern}/ within {timeout}:{Environment.NewLine}{Output}");
            }
            // Re-checks output that arrives on another thread; not a race to win.
            await Task.Delay(20);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(20));
        }
        _process.Dispose();
    }

    private static string Configuration =>
        typeof(HostProcess).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration ?? "Release";

    /// <summary>The host built in the same configuration as these tests (the test project references it, so it is built first).</summary>
    private static string BuiltHostDll()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "Laharsub.sln")))
            {
                return Path.Combine(directory.FullName, "src", "Server", "Host", "bin", Configuration, "net10.0", "Laharsub.Server.Host.dll");
            }
        }
        throw new InvalidOperationException($"No Laharsub.sln above {AppContext.BaseDirectory}.");
    }

    [GeneratedRegex(@"Now listening on: (?<address>http://127\.0\.0\.1:\d+)")]
    private static partial Regex ListeningOn();
}
