using System.Diagnostics;
using System.Globalization;
using Laharsub.Server.Storage;
using Laharsub.Testing;
using Xunit.Abstractions;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// <c>Laharsub:Redis:AcknowledgeReplicas</c> on a private primary with one replica: a publish is
/// acknowledged once the replica has it, and answered 503 (stored, not confirmed) when fewer replicas
/// than asked confirm in time. Also writes the latency of sequential publishes with and without it.
/// </summary>
public sealed class RedisAcknowledgeReplicasTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task APublishIsAcknowledgedOnceTheReplicasHaveItAndRefusedWhenTooFewConfirm()
    {
        await using var primary = await RedisServer.StartAsync();
        await using var replica = await RedisServer.StartAsync(extraArguments: ["--replicaof", "127.0.0.1", primary.Port.ToString(CultureInfo.InvariantCulture)]);
        await Eventually.HoldsAsync(async () => (await RedisSentinelSet.InfoAsync(replica.Port, "replication")).Contains("master_link_status:up", StringComparison.Ordinal),
            Bound, "the replica is in sync");
        var prefix = $"wait-{Guid.NewGuid():N}:";
        var signals = new NoSignals();
        await using var plain = RedisStores.Create(primary.Configuration, prefix, new LaharsubStoreOptions(), signals);
        await using var one = RedisStores.Create(primary.Configuration, prefix, new LaharsubStoreOptions(), signals, redis => redis.AcknowledgeReplicas = 1);
        await using var two = RedisStores.Create(primary.Configuration, prefix, new LaharsubStoreOptions(), signals, redis =>
        {
            redis.AcknowledgeReplicas = 2;
            redis.AcknowledgeTimeout = TimeSpan.FromMilliseconds(200);
        });
        var topic = (await plain.Store.CreateTopicAsync().AsTask().WaitAsync(Bound))!;

        // Warmed up first (JIT, connections), then alternated, so that neither setting gets the quieter moment.
        await TimePublishesAsync(plain.Store, topic.TopicId);
        await TimePublishesAsync(one.Store, topic.TopicId);
        for (var round = 0; round < 2; round++)
        {
            var withoutWait = await TimePublishesAsync(plain.Store, topic.TopicId);
            var withWait = await TimePublishesAsync(one.Store, topic.TopicId);
            output.WriteLine($"500 sequential publishes, mean / p99 ms: AcknowledgeReplicas=0 {withoutWait.Mean:F3} / {withoutWait.P99:F3}, AcknowledgeReplicas=1 {withWait.Mean:F3} / {withWait.P99:F3}");
        }

        var refused = await Assert.ThrowsAsync<LaharsubStoreUnavailableException>(() => two.Store.PublishAsync(topic.TopicId, "x"u8.ToArray(), "text/plain").AsTask().WaitAsync(Bound));
        Assert.Contains("1 of the 2 replicas", refused.Message, StringComparison.Ordinal);
        // Stored on the primary all the same, and on the one replica there is.
        Assert.Equal(3001, (await plain.Store.GetTopicAsync(topic.TopicId).AsTask().WaitAsync(Bound))!.LastMessageId);
    }

    private static async Task<(double Mean, double P99)> TimePublishesAsync(ILaharsubStore store, long topicId)
    {
        var times = new List<double>();
        for (var i = 0; i < 500; i++)
        {
            var clock = Stopwatch.StartNew();
            var result = await store.PublishAsync(topicId, "m"u8.ToArray(), "text/plain").AsTask().WaitAsync(Bound);
            times.Add(clock.Elapsed.TotalMilliseconds);
            Assert.Equal(PublishStatus.Published, result.Status);
        }
        times.Sort();
        return (times.Average(), times[(int)(times.Count * 0.99)]);
    }
}
