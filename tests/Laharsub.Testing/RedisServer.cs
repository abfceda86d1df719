using System.Globalization;
using Laharsub.LoadTestClient.Hosting;

namespace Laharsub.Testing;

/// <summary>
/// A private redis-server (Debian's package) on a free loopback port with its own directory and no
/// persistence, started for the tests and stopped after them. A test that needs Redis fails, with
/// this message, when it cannot start: it never skips.
/// </summary>
public sealed class RedisServer : IAsyncDisposable
{
    private readonly ChildProcess _process;
    private readonly string _directory;

    private RedisServer(ChildProcess process, string directory, int port)
    {
        _process = process;
        _directory = directory;
        Port = port;
    }

    public int Port { get; }

    /// <summary>What to do when redis-server (or redis-cli) is missing.</summary>
    public const string InstallHint = "these tests need a real Redis. Run ./test.sh, which installs Debian's redis-server, or apt-get install redis-server";

    /// <summary>The StackExchange.Redis configuration string for this server.</summary>
    public string Configuration => $"127.0.0.1:{Port}";

    /// <param name="extraArguments">More redis-server options, e.g. <c>--cluster-enabled yes</c> or <c>--replicaof</c>.</param>
    public static async Task<RedisServer> StartAsync(int port = 0, string? directory = null, IReadOnlyList<string>? extraArguments = null)
    {
        port = port == 0 ? ChildProcess.FreeLoopbackPort() : port;
        directory ??= Directory.CreateTempSubdirectory("laharsub-redis-").FullName;
        string[] arguments = ["--port", port.ToString(CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--dir", directory,
            "--save", "", "--appendonly", "no", "--daemonize", "no", .. extraArguments ?? []];
        var process = ChildProcess.Start("redis-server", "redis-server", arguments, _ => { }, installHint: InstallHint);
        var server = new RedisServer(process, directory, port);
        var listening = process.WaitUntilListeningAsync(port, TimeSpan.FromSeconds(15), () => $" (port {port}); is the port taken?", CancellationToken.None);
        return await ChildProcess.ReadyOrDisposedAsync(server, listening);
    }

    /// <summary>Stops Redis at once, as a crash would (data of a server without persistence is lost).</summary>
    public Task KillAsync() => _process.KillAsync(TimeSpan.FromSeconds(15));

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
}
