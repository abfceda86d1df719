using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace Laharsub.Testing;

/// <summary>
/// A private redis-server (Debian's package) on a free loopback port with its own directory and no
/// persistence, started for the tests and stopped after them. A test that needs Redis fails, with
/// this message, when it cannot start: it never skips.
/// </summary>
public sealed class RedisServer : IAsyncDisposable
{
    private readonly Process _process;
    private readonly string _directory;

    private RedisServer(Process process, string directory, int port)
    {
        _process = process;
        _directory = directory;
        Port = port;
    }

    public int Port { get; }

    /// <summary>The StackExchange.Redis configuration string for this server.</summary>
    public string Configuration => $"127.0.0.1:{Port}";

    public static async Task<RedisServer> StartAsync(int port = 0, string? directory = null)
    {
        port = port == 0 ? FreePort() : port;
        directory ??= Directory.CreateTempSubdirectory("laharsub-redis-").FullName;
        var start = new ProcessStartInfo("redis-server")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var argument in new[] { "--port", port.ToString(), "--bind", "127.0.0.1", "--dir", directory, "--save", "", "--appendonly", "no", "--daemonize", "no" })
        {
            start.ArgumentList.Add(argument);
        }
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new InvalidOperationException("Process.Start returned null.");
        }
        catch (Exception exception)
        {
            throw new InvalidOperationException(
                "redis-server could not be started: these tests need a real Redis. Run ./test.sh, which installs Debian's redis-server, or apt-get install redis-server. " + exception.Message, exception);
        }
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        var server = new RedisServer(process, directory, port);
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        while (true)
        {
            if (process.HasExited)
            {
                throw new InvalidOperationException($"redis-server exited at start with code {process.ExitCode} (port {port}); is the port taken?");
            }
            try
            {
                using var client = new TcpClient();
                await client.ConnectAsync(IPAddress.Loopback, port).WaitAsync(TimeSpan.FromSeconds(1));
                return server;
            }
            catch (Exception) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(50);
            }
        }
    }

    /// <summary>Stops Redis at once, as a crash would (data of a server without persistence is lost).</summary>
    public async Task KillAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
            await _process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(15));
        }
    }

    public async ValueTask DisposeAsync()
    {
        await KillAsync();
        _process.Dispose();
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
