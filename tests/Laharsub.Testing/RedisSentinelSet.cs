using System.Globalization;
using Laharsub.LoadTestClient.Hosting;

namespace Laharsub.Testing;

/// <summary>
/// A private Sentinel setup on loopback: one primary, one replica and one sentinel (redis-server in
/// sentinel mode, which is what Debian's redis-sentinel runs) on free ports, the sentinel watching
/// service <see cref="ServiceName"/> with a 1 s down-after, so that killing the primary promotes the
/// replica within seconds. Fails, saying why, when a process cannot start or the setup does not settle.
/// </summary>
public sealed class RedisSentinelSet : IAsyncDisposable
{
    public const string ServiceName = "laharsub";
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);
    private readonly List<RedisServer> _servers = [];
    private ChildProcess? _sentinel;
    private string? _sentinelDirectory;

    public RedisServer Primary => _servers[0];

    public RedisServer Replica => _servers[1];

    public int SentinelPort { get; private set; }

    /// <summary>The StackExchange.Redis configuration string: the sentinel and the service name.</summary>
    public string Configuration => $"127.0.0.1:{SentinelPort},serviceName={ServiceName}";

    public static async Task<RedisSentinelSet> StartAsync()
    {
        var set = new RedisSentinelSet();
        try
        {
            set._servers.Add(await RedisServer.StartAsync());
            set._servers.Add(await RedisServer.StartAsync(extraArguments: ["--replicaof", "127.0.0.1", set.Primary.Port.ToString(CultureInfo.InvariantCulture)]));
            await Eventually.HoldsAsync(async () => (await InfoAsync(set.Replica.Port, "replication")).Contains("master_link_status:up", StringComparison.Ordinal),
                Bound, "the replica is in sync with the primary");
            set.SentinelPort = ChildProcess.FreeLoopbackPort();
            set._sentinelDirectory = Directory.CreateTempSubdirectory("laharsub-sentinel-").FullName;
            var file = Path.Combine(set._sentinelDirectory, "sentinel.conf");
            // Sentinel rewrites its file as it learns the setup, so it is a file of its own, writable.
            await File.WriteAllTextAsync(file, $"""
                port {set.SentinelPort}
                bind 127.0.0.1
                dir {set._sentinelDirectory}
                sentinel monitor {ServiceName} 127.0.0.1 {set.Primary.Port} 1
                sentinel down-after-milliseconds {ServiceName} 1000
                sentinel failover-timeout {ServiceName} 10000
                sentinel parallel-syncs {ServiceName} 1

                """);
            set._sentinel = ChildProcess.Start("redis-sentinel", "redis-server", [file, "--sentinel"], _ => { }, installHint: RedisServer.InstallHint);
            await set._sentinel.WaitUntilListeningAsync(set.SentinelPort, TimeSpan.FromSeconds(15), () => $" (sentinel, port {set.SentinelPort})", CancellationToken.None);
            await Eventually.HoldsAsync(async () => (await RedisCli.RunAsync(Bound, "-p", set.SentinelPort.ToString(CultureInfo.InvariantCulture), "sentinel", "replicas", ServiceName))
                .Contains(set.Replica.Port.ToString(CultureInfo.InvariantCulture), StringComparison.Ordinal), Bound, "the sentinel knows the replica");
            return set;
        }
        catch
        {
            await set.DisposeAsync();
            throw;
        }
    }

    /// <summary>The port of the primary the sentinel names now.</summary>
    public async Task<int> CurrentPrimaryPortAsync()
    {
        var lines = (await RedisCli.RunAsync(Bound, "-p", SentinelPort.ToString(CultureInfo.InvariantCulture), "sentinel", "get-master-addr-by-name", ServiceName))
            .Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        return int.Parse(lines[1], CultureInfo.InvariantCulture);
    }

    public static Task<string> InfoAsync(int port, string section) => RedisCli.RunAsync(Bound, "-p", port.ToString(CultureInfo.InvariantCulture), "info", section);

    public async ValueTask DisposeAsync()
    {
        if (_sentinel is not null)
        {
            await _sentinel.KillAsync(TimeSpan.FromSeconds(15));
            _sentinel.Dispose();
        }
        foreach (var server in _servers)
        {
            await server.DisposeAsync();
        }
        if (_sentinelDirectory is not null)
        {
            try
            {
                Directory.Delete(_sentinelDirectory, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }
}
