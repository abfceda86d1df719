using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// A helper process (the server, nginx, redis-server) run for a while on a free loopback port: started
/// with its output drained line by line, waited for until it answers, stopped with bounded waits.
/// </summary>
/// <remarks>
/// Laharsub.Testing compiles this file too (a linked source file) for its HostProcess and RedisServer:
/// one copy of this logic without a reference from the load test tool to test code, or from every
/// test project to the tool.
/// </remarks>
internal sealed partial class ChildProcess : IDisposable
{
    /// <summary>The standalone server's project directory, relative to the repository root.</summary>
    public const string HostDirectory = "src/Server/Host";

    public const string HostAssemblyName = "Laharsub.Server.Host";

    private const int SigTerm = 15;

    private readonly Process _process;

    private ChildProcess(Process process, string name)
    {
        _process = process;
        Name = name;
    }

    /// <summary>How messages name it, e.g. "nginx" or "The server".</summary>
    public string Name { get; }

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>
    /// Starts <paramref name="fileName"/> and hands each line it writes (standard output and error) to
    /// <paramref name="onOutput"/>: a child whose pipe is never read blocks once the pipe is full.
    /// </summary>
    /// <param name="standardOutput">False: only standard error goes to <paramref name="onOutput"/>; standard output is read and dropped.</param>
    /// <param name="environment">Variables to set; a null value removes the variable.</param>
    /// <param name="installHint">What to do when <paramref name="fileName"/> cannot be started, e.g. the command that installs it.</param>
    /// <exception cref="InvalidOperationException">It could not be started; the message says why and, with <paramref name="installHint"/>, what to do.</exception>
    public static ChildProcess Start(string name, string fileName, IEnumerable<string> arguments, Action<string> onOutput, bool standardOutput = true,
        string? workingDirectory = null, IEnumerable<KeyValuePair<string, string?>>? environment = null, string? installHint = null)
    {
        var start = new ProcessStartInfo(fileName)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = workingDirectory ?? "",
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        foreach (var (variable, value) in environment ?? [])
        {
            if (value is null)
            {
                start.Environment.Remove(variable);
            }
            else
            {
                start.Environment[variable] = value;
            }
        }
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new InvalidOperationException($"{fileName} could not be started.");
        }
        catch (System.ComponentModel.Win32Exception exception)
        {
            throw new InvalidOperationException($"{fileName} could not be started ({exception.Message}){(installHint is null ? "." : ": " + installHint + ".")}", exception);
        }
        process.OutputDataReceived += (_, e) => { if (e.Data is not null && standardOutput) onOutput(e.Data); };
        process.ErrorDataReceived += (_, e) => { if (e.Data is not null) onOutput(e.Data); };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return new ChildProcess(process, name);
    }

    /// <summary>
    /// Starts the standalone server (<c>dotnet HOST.dll --urls http://127.0.0.1:PORT ARGUMENTS</c>) in
    /// its build directory, where it finds its appsettings.json.
    /// </summary>
    /// <param name="launcher">A command that runs the rest of the command line, e.g. a shell that sets a limit first.</param>
    /// <param name="name">How messages name it (another ASP.NET Core application started the same way: the floor).</param>
    public static ChildProcess StartHost(string dll, int port, IEnumerable<string> arguments, Action<string> onOutput,
        IEnumerable<KeyValuePair<string, string?>>? environment = null, IReadOnlyList<string>? launcher = null, string name = "The server")
    {
        string[] command = [.. launcher ?? [], "dotnet", dll, "--urls", $"http://127.0.0.1:{port}", .. arguments];
        return Start(name, command[0], command[1..], onOutput, workingDirectory: Path.GetDirectoryName(dll), environment: environment);
    }

    /// <summary>The standalone server's build output of <paramref name="configuration"/> in the repository at <paramref name="repositoryRoot"/>.</summary>
    public static string HostDll(string repositoryRoot, string configuration) => ProjectDll(repositoryRoot, HostDirectory, HostAssemblyName, configuration);

    /// <summary>The dll that building the project in <paramref name="projectDirectory"/> (relative to the repository root) in <paramref name="configuration"/> makes.</summary>
    public static string ProjectDll(string repositoryRoot, string projectDirectory, string assemblyName, string configuration) =>
        Path.Combine(repositoryRoot, projectDirectory, "bin", configuration, "net10.0", assemblyName + ".dll");

    /// <summary>The directory holding Laharsub.sln, searched upwards from each of <paramref name="starts"/> in turn.</summary>
    public static string? FindRepositoryRoot(params string[] starts)
    {
        foreach (var start in starts)
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

    public static int FreeLoopbackPort()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }

    /// <summary>
    /// <paramref name="owner"/> (what holds the process just started) once <paramref name="ready"/> completes;
    /// when <paramref name="ready"/> fails, disposes it, so that nothing it started or made is left behind.
    /// </summary>
    public static async Task<T> ReadyOrDisposedAsync<T>(T owner, Task ready) where T : IAsyncDisposable
    {
        try
        {
            await ready.ConfigureAwait(false);
        }
        catch
        {
            await owner.DisposeAsync().ConfigureAwait(false);
            throw;
        }
        return owner;
    }

    /// <summary>Waits until <c>GET /health</c> at <paramref name="baseAddress"/> answers 2xx.</summary>
    /// <param name="whereToLook">Appended to a failure message: where its output is, e.g. "; see the [nchan] lines above."</param>
    /// <exception cref="InvalidOperationException">It exited first.</exception>
    /// <exception cref="TimeoutException">It did not answer within <paramref name="timeout"/>.</exception>
    public async Task WaitUntilHealthyAsync(Uri baseAddress, TimeSpan timeout, Func<string> whereToLook, CancellationToken cancellationToken)
    {
        using var client = new HttpClient { BaseAddress = baseAddress, Timeout = TimeSpan.FromSeconds(5) };
        await WaitUntilAsync("answer /health", async () =>
        {
            using var response = await client.GetAsync("health", cancellationToken).ConfigureAwait(false);
            return response.IsSuccessStatusCode;
        }, timeout, whereToLook, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Waits until it accepts TCP connections on <paramref name="port"/> of the loopback address.</summary>
    /// <inheritdoc cref="WaitUntilHealthyAsync" path="/exception"/>
    public Task WaitUntilListeningAsync(int port, TimeSpan timeout, Func<string> whereToLook, CancellationToken cancellationToken) =>
        WaitUntilAsync($"listen on 127.0.0.1:{port}", async () =>
        {
            using var client = new TcpClient();
            await client.ConnectAsync(IPAddress.Loopback, port, cancellationToken).AsTask().WaitAsync(TimeSpan.FromSeconds(1), cancellationToken).ConfigureAwait(false);
            return true;
        }, timeout, whereToLook, cancellationToken);

    /// <summary>
    /// Sends SIGTERM (a graceful stop for the server and for nginx) and waits up to <paramref name="grace"/>.
    /// </summary>
    /// <returns>Whether it has exited.</returns>
    public async Task<bool> TerminateAsync(TimeSpan grace)
    {
        if (_process.HasExited)
        {
            return true;
        }
        _ = SendSignal(_process.Id, SigTerm);
        using var timeout = new CancellationTokenSource(grace);
        try
        {
            await _process.WaitForExitAsync(timeout.Token).ConfigureAwait(false);
            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>Kills it and its children at once (SIGKILL) and waits, within <paramref name="wait"/>, for its end.</summary>
    public async Task KillAsync(TimeSpan wait)
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync(CancellationToken.None).WaitAsync(wait).ConfigureAwait(false);
        }
    }

    /// <summary>SIGTERM; SIGKILL to it and its children when it has not exited within <paramref name="grace"/>.</summary>
    public async Task StopAsync(TimeSpan grace)
    {
        if (!await TerminateAsync(grace).ConfigureAwait(false))
        {
            await KillAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        }
    }

    public void Dispose() => _process.Dispose();

    private async Task WaitUntilAsync(string readiness, Func<Task<bool>> answers, TimeSpan timeout, Func<string> whereToLook,
        CancellationToken cancellationToken)
    {
        var deadline = Stopwatch.StartNew();
        while (true)
        {
            if (_process.HasExited)
            {
                // HasExited can turn true before the last lines (the reason it stopped) are read: wait,
                // bounded, for the end of both streams, so that the log and the message include them.
                await _process.WaitForExitAsync(CancellationToken.None).WaitAsync(TimeSpan.FromSeconds(10), cancellationToken).ConfigureAwait(false);
                throw new InvalidOperationException($"{Name} exited at start with code {_process.ExitCode}{whereToLook()}");
            }
            try
            {
                if (await answers().ConfigureAwait(false))
                {
                    return;
                }
            }
            catch (Exception exception) when (exception is HttpRequestException or SocketException or TimeoutException
                || (exception is OperationCanceledException && !cancellationToken.IsCancellationRequested))
            {
                // Not listening yet, or too slow to answer while it starts: ask again.
            }
            if (deadline.Elapsed > timeout)
            {
                throw new TimeoutException($"{Name} did not {readiness} within {timeout.TotalSeconds:0} s{whereToLook()}");
            }
            await Task.Delay(50, cancellationToken).ConfigureAwait(false);
        }
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int SendSignal(int pid, int signal);
}
