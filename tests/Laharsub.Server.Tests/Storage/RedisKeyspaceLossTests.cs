using System.Net;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using StackExchange.Redis;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// A Redis that loses every key while the connection stays up (FLUSHALL, or a failover to an empty replica)
/// announces no delete. Waiting polls and streams are still told topicDeleted within one
/// RetentionSweepInterval, not at a poll's timeout, and a stream, which has none, not never.
/// </summary>
public sealed class RedisKeyspaceLossTests
{
    private static readonly TimeSpan SweepInterval = TimeSpan.FromSeconds(1);

    /// <summary>The Redis store's mark of its keyspace, under the default key prefix (docs/scale-out.md, "Key layout").</summary>
    private const string KeyspaceMark = "laharsub:{0}keyspace";

    /// <summary>Real time for what follows the sweep: its script, the re-reads, and the answers on loopback.</summary>
    private static readonly TimeSpan Margin = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task AFlushAllTellsAWaitingPollAndAStreamTheirTopicWasDeletedWithinOneSweepInterval()
    {
        await using var redis = await RedisServer.StartAsync();
        var clock = new FakeTimeProvider();
        await using var server = await StartOnAsync(redis, clock);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var epoch = (await client.GetTopicAsync(topic)).GetProperty("epoch").GetString();
        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}");
        await stream.ReadEventAsync("subscribed");
        // The fake clock never reaches this timeout: only the flush can end the poll.
        var poll = client.PollAsync($"topics={topic}:1&timeout=60");
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == 2,
            WireClient.Bound, "the poll and the stream wait");
        // Both have read the topic once it answers on the same connection: the flush cannot overtake
        // their first reads, which would make the poll a plain 404 instead of the notice under test.
        await client.GetTopicAsync(topic);

        await using var admin = await AdminAsync(redis);
        await admin.GetServer(admin.GetEndPoints()[0]).FlushAllDatabasesAsync();
        clock.Advance(SweepInterval);

        var answer = await poll.WaitAsync(Margin);
        var notice = await stream.ReadEventAsync("notice", Margin);
        Assert.Equal(HttpStatusCode.OK, answer.Status);
        var deleted = Assert.Single(answer.Notices);
        Assert.Equal(("topicDeleted", topic, epoch), (deleted.Type, deleted.TopicId, deleted.Json.GetProperty("epoch").GetString()));
        Assert.Equal(("topicDeleted", topic, epoch),
            (notice.Json.GetProperty("type").GetString(), notice.Json.GetProperty("topicId").GetInt64(), notice.Json.GetProperty("epoch").GetString()));
    }

    [Fact]
    public async Task AnInstanceThatFindsTheKeyspaceMarkedAgainByAnotherStillTellsItsWaitingPoll()
    {
        await using var redis = await RedisServer.StartAsync();
        var (clockA, clockB) = (new FakeTimeProvider(), new FakeTimeProvider());
        await using var a = await StartOnAsync(redis, clockA);
        await using var b = await StartOnAsync(redis, clockB);
        using var atA = a.CreateClient();
        using var atB = b.CreateClient();
        var topic = await atA.CreateTopicAsync();
        var epoch = (await atA.GetTopicAsync(topic)).GetProperty("epoch").GetString();
        var poll = atB.PollAsync($"topics={topic}:1&timeout=60");
        await Eventually.HoldsAsync(async () => (await atB.GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == 1,
            WireClient.Bound, "the poll waits at B");
        await atB.GetTopicAsync(topic);
        await using var admin = await AdminAsync(redis);
        var marked = () => admin.GetDatabase().KeyExistsAsync(KeyspaceMark);

        // B's sweep marks the keyspace, so B has seen a mark before the flush; then, after the flush, A's
        // sweep comes first and marks it anew. B never finds the mark missing, only another one.
        clockB.Advance(SweepInterval);
        await Eventually.HoldsAsync(marked, WireClient.Bound, "B marked the keyspace");
        await admin.GetServer(admin.GetEndPoints()[0]).FlushAllDatabasesAsync();
        clockA.Advance(SweepInterval);
        await Eventually.HoldsAsync(marked, WireClient.Bound, "A marked the flushed keyspace");
        // A tick that finds B's previous sweep still running is skipped, so B may need a second one.
        var ticks = 0;
        while (ticks < 2 && !poll.IsCompleted)
        {
            clockB.Advance(SweepInterval);
            ticks++;
            await Task.WhenAny(poll, Task.Delay(Margin));
        }

        Assert.True(poll.IsCompleted, $"the poll at B was not answered within {ticks} sweep intervals of B's clock");
        var deleted = Assert.Single((await poll).Notices);
        Assert.Equal(("topicDeleted", topic, epoch), (deleted.Type, deleted.TopicId, deleted.Json.GetProperty("epoch").GetString()));
    }

    private static Task<LaharsubTestServer> StartOnAsync(RedisServer redis, FakeTimeProvider clock) =>
        LaharsubTestServer.StartAsync(o => o.RetentionSweepInterval = SweepInterval, services =>
        {
            services.AddSingleton<TimeProvider>(clock);
            services.AddLaharsub().AddRedis(o => o.Configuration = redis.Configuration);
        });

    /// <summary>A connection that may run FLUSHALL, which StackExchange.Redis refuses without allowAdmin.</summary>
    private static Task<ConnectionMultiplexer> AdminAsync(RedisServer redis) =>
        ConnectionMultiplexer.ConnectAsync($"{redis.Configuration},allowAdmin=true");
}
