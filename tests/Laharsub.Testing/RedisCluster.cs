using System.Globalization;
using Laharsub.LoadTestClient.Hosting;

namespace Laharsub.Testing;

/// <summary>
/// A private Redis Cluster on loopback: <c>primaries</c> redis-servers with cluster mode on, each with
/// <c>replicasPerPrimary</c> replicas, on free ports, joined by <c>redis-cli --cluster create</c>. It fails,
/// saying why, when a server cannot start or the cluster does not become ready: it never skips.
/// </summary>
public sealed class RedisCluster : IAsyncDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);
    private readonly List<RedisServer> _nodes;

    private RedisCluster(List<RedisServer> nodes) => _nodes = nodes;

    public IReadOnlyList<RedisServer> Nodes => _nodes;

    /// <summary>A StackExchange.Redis configuration string naming every node (the client would find the others from one).</summary>
    public string Configuration => string.Join(",", _nodes.Select(node => node.Configuration));

    public static async Task<RedisCluster> StartAsync(int primaries = 3, int replicasPerPrimary = 0)
    {
        var nodes = new List<RedisServer>();
        var cluster = new RedisCluster(nodes);
        try
        {
            for (var i = 0; i < primaries * (1 + replicasPerPrimary); i++)
            {
                // A node times out after 2 s without answering, so a failover in a test takes seconds, not the default 15.
                // The bus port is a free one of its own: the default (port + 10000) may be taken, or above 65535.
                nodes.Add(await RedisServer.StartAsync(extraArguments:
                    ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
                        "--cluster-port", ChildProcess.FreeLoopbackPort().ToString(CultureInfo.InvariantCulture)]));
            }
            await RedisCli.RunAsync(Bound, ["--cluster", "create", .. nodes.Select(node => node.Configuration),
                "--cluster-replicas", replicasPerPrimary.ToString(CultureInfo.InvariantCulture), "--cluster-yes"]);
            foreach (var node in nodes)
            {
                await Eventually.HoldsAsync(async () => (await RedisCli.RunAsync(Bound, "-p", node.Port.ToString(CultureInfo.InvariantCulture), "cluster", "info"))
                    .Contains("cluster_state:ok", StringComparison.Ordinal), Bound, $"the cluster node on port {node.Port} reports cluster_state:ok");
                // A replica that never synced refuses to take over (its data counts as too old), so a failover test would wait for nothing.
                await Eventually.HoldsAsync(async () =>
                {
                    var replication = await RedisCli.RunAsync(Bound, "-p", node.Port.ToString(CultureInfo.InvariantCulture), "info", "replication");
                    return replication.Contains("role:master", StringComparison.Ordinal) || replication.Contains("master_link_status:up", StringComparison.Ordinal);
                }, Bound, $"the cluster node on port {node.Port} is a primary or a replica in sync");
            }
            return cluster;
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var node in _nodes)
        {
            await node.DisposeAsync();
        }
    }
}
