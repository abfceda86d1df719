using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;
using Laharsub.Server.Storage;
using Laharsub.Testing;
using Xunit.Abstractions;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// Failover under load on real components: publishers and a reader (two store instances, as two servers
/// would be) keep going while the Redis primary is killed (SIGKILL) and Sentinel promotes the replica.
/// Replication is asynchronous, so the promoted replica may lack the last acknowledged publishes; the
/// promise is that no reader misses one silently. The reader follows the protocol's rules
/// (docs/protocol.md, "Cursors"): another epoch is an <c>epochChanged</c> reset, a cursor beyond the end
/// a <c>beyondEnd</c> reset, a cursor before the first retained message a gap. Every acknowledged
/// message must be read (with the very body published), or lie at or after the cursor of a notice of its
/// epoch; the counts are written to the output and to docs/scale-out.md.
/// </summary>
public sealed class RedisFailoverTests(ITestOutputHelper output)
{
    private const int Topics = 4;
    private const int LoadBeforeKill = 300;
    private const int LoadAfterKill = 300;
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(90);

    [Fact]
    public async Task KillingTheSentinelPrimaryUnderLoadLosesNoAcknowledgedMessageSilently()
    {
        await using var set = await RedisSentinelSet.StartAsync();
        await RunAsync(set.Configuration, buckets: 1, async _ =>
        {
            await set.Primary.KillAsync();
            return async () => await set.CurrentPrimaryPortAsync() == set.Replica.Port;
        });
    }

    /// <summary>
    /// The same on a 3-primary cluster with a replica each and 16 buckets: the primary that holds the first
    /// topic's bucket is killed; the topics of its buckets must reset, the others go on untouched.
    /// </summary>
    [Fact]
    public async Task KillingAClusterPrimaryUnderLoadLosesNoAcknowledgedMessageSilently()
    {
        await using var cluster = await RedisCluster.StartAsync(primaries: 3, replicasPerPrimary: 1);
        await RunAsync(cluster.Configuration, buckets: 16, async metaKey =>
        {
            RedisServer? victim = null;
            foreach (var node in cluster.Nodes)
            {
                if ((await Cli(node, "role")).StartsWith("master", StringComparison.Ordinal) && (await Cli(node, "exists", metaKey)).Trim() == "1")
                {
                    victim = node;
                }
            }
            Assert.NotNull(victim);
            await victim.KillAsync();
            return async () =>
            {
                foreach (var node in cluster.Nodes.Where(node => node != victim))
                {
                    // A replica answers MOVED for the key; the one promoted answers it.
                    if ((await Cli(node, "role")).StartsWith("master", StringComparison.Ordinal) && (await Cli(node, "exists", metaKey)).Trim() == "1")
                    {
                        return true;
                    }
                }
                return false;
            };
        });
    }

    private static Task<string> Cli(RedisServer node, params string[] command) =>
        RedisCli.RunAsync(Bound, ["-p", node.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), .. command]);

    /// <summary>
    /// Runs the load, calls <paramref name="kill"/> with the first topic's key once enough is acknowledged
    /// (it kills the primary that holds it and returns whether a replica has taken over), and checks the
    /// outcome. The first topic must be reset; with one bucket, all of them.
    /// </summary>
    private async Task RunAsync(string configuration, int buckets, Func<string, Task<Func<Task<bool>>>> kill)
    {
        var prefix = $"failover-{Guid.NewGuid():N}:";
        await using var publisherStore = RedisStores.Create(configuration, prefix, new LaharsubStoreOptions(), new NoSignals(), redis => redis.Buckets = buckets);
        await using var readerStore = RedisStores.Create(configuration, prefix, new LaharsubStoreOptions(), new NoSignals(), redis => redis.Buckets = buckets);
        var topics = new List<long>();
        for (var i = 0; i < Topics; i++)
        {
            topics.Add((await Retry(() => publisherStore.Store.CreateTopicAsync()))!.TopicId);
        }
        // The first topic's hash, named as RedisScripts' remarks lay out the keys.
        var metaKey = $"{prefix}{{{topics[0] % buckets}}}t:{topics[0]}";
        var run = new Run(topics);
        using var stop = new CancellationTokenSource();
        using var stopReading = new CancellationTokenSource();
        var publishing = Task.Run(() => PublishAsync(publisherStore.Store, run, stop.Token));
        var reading = Task.Run(() => ReadAsync(readerStore.Store, run, stopReading.Token));

        await Eventually.HoldsAsync(() => Task.FromResult(run.Acknowledged.Count >= LoadBeforeKill || publishing.IsCompleted), Bound, $"{LoadBeforeKill} publishes were acknowledged");
        var killedAfter = run.Acknowledged.Count;
        var clock = Stopwatch.StartNew();
        var promoted = await kill(metaKey);
        await Eventually.HoldsAsync(promoted, Bound, "a replica took over from the killed primary");
        var promotedAfter = clock.Elapsed;
        // Enough after the kill, and some to the first topic after the promotion: its shard's new primary has written.
        var firstTopicAcks = run.AcknowledgedTo(topics[0]);
        await Eventually.HoldsAsync(() => Task.FromResult((run.Acknowledged.Count >= killedAfter + LoadAfterKill && run.AcknowledgedTo(topics[0]) >= firstTopicAcks + 20)
            || publishing.IsCompleted), Bound, $"{LoadAfterKill} more publishes were acknowledged after the kill, 20 of them to the first topic after the promotion");
        var outage = run.LongestPauseBetweenAcknowledgements();
        await stop.CancelAsync();
        await publishing.WaitAsync(Bound);
        // The reader catches up with the end of every topic, in the epoch the topic has now.
        await Eventually.HoldsAsync(async () => await run.CaughtUpAsync(readerStore.Store) || reading.IsCompleted, Bound, "the reader caught up");
        await stopReading.CancelAsync();
        await reading.WaitAsync(Bound);

        var delivered = 0;
        var told = 0;
        var silent = new List<string>();
        foreach (var ((topic, epoch, id), body) in run.Acknowledged)
        {
            if (run.Received.TryGetValue((topic, epoch, id), out var read))
            {
                Assert.True(read == body, $"topic {topic} epoch {epoch} message {id} was acknowledged as '{body}' but read as '{read}': an id reused without a new epoch");
                delivered++;
            }
            else if (run.Notices.Any(notice => notice.Topic == topic && notice.Epoch == epoch && notice.From <= id))
            {
                told++;
            }
            else
            {
                silent.Add($"topic {topic} epoch {epoch} message {id}");
            }
        }
        output.WriteLine($"acknowledged {run.Acknowledged.Count} ({killedAfter} before the kill), delivered {delivered}, told (reset or gap) {told}, silently missed {silent.Count}");
        output.WriteLine($"notices {run.Notices.Count}: {string.Join("; ", run.Notices.Select(notice => $"{notice.Kind} topic {notice.Topic} from {notice.From}"))}");
        output.WriteLine($"promoted after {promotedAfter.TotalSeconds:F1} s; publishing paused at most {outage.TotalSeconds:F1} s; publishes refused meanwhile (503) {run.Unavailable}");
        Assert.True(publishing.IsCompletedSuccessfully, $"the publisher failed: {publishing.Exception}");
        Assert.True(reading.IsCompletedSuccessfully, $"the reader failed: {reading.Exception}");
        Assert.Empty(silent);
        Assert.True(run.Acknowledged.Count >= killedAfter + LoadAfterKill, "the publisher did not keep going after the failover");
        // The promoted replica has another replication id, so the epochs of its buckets' topics change: the reader is told.
        Assert.True(topics.Where(topic => buckets == 1 || topic == topics[0]).All(topic => run.Notices.Any(notice => notice.Topic == topic && notice.Kind == "epochChanged")),
            "a topic's epoch did not change across the failover, so a reader could not have been told of lost messages");
    }

    private static async Task PublishAsync(ILaharsubStore store, Run run, CancellationToken stop)
    {
        var sequence = 0;
        while (!stop.IsCancellationRequested)
        {
            var topic = run.Topics[sequence % run.Topics.Count];
            var body = $"{topic}-{sequence++}";
            try
            {
                var result = await store.PublishAsync(topic, Encoding.UTF8.GetBytes(body), "text/plain", cancellationToken: CancellationToken.None).AsTask()
                    .WaitAsync(Bound, CancellationToken.None);
                Assert.Equal(PublishStatus.Published, result.Status);
                run.Acknowledge(topic, result.Epoch!, result.MessageId, body);
            }
            catch (LaharsubStoreUnavailableException)
            {
                Interlocked.Increment(ref run.Unavailable);
                // Redis is failing over: try again shortly, as a client told 503 with Retry-After would.
                await Task.Delay(20, CancellationToken.None);
            }
        }
    }

    private static async Task ReadAsync(ILaharsubStore store, Run run, CancellationToken stop)
    {
        var results = new TopicReadResult[run.Topics.Count];
        var messages = new List<Message>();
        while (!stop.IsCancellationRequested)
        {
            var requests = run.Topics.Select(topic => new TopicReadRequest(topic, run.Cursors[topic].Next, 1000, 1 << 20)).ToArray();
            messages.Clear();
            try
            {
                await store.ReadAsync(requests, results, messages, CancellationToken.None).AsTask().WaitAsync(Bound, CancellationToken.None);
            }
            catch (LaharsubStoreUnavailableException)
            {
                await Task.Delay(20, CancellationToken.None);
                continue;
            }
            var offset = 0;
            for (var i = 0; i < requests.Length; i++)
            {
                run.Apply(requests[i].TopicId, results[i], messages.GetRange(offset, results[i].MessageCount));
                offset += results[i].MessageCount;
            }
            // A poll interval, not a race: the end of the run is decided by CaughtUpAsync.
            await Task.Delay(5, CancellationToken.None);
        }
    }

    private static async Task<T> Retry<T>(Func<ValueTask<T>> operation)
    {
        var deadline = DateTime.UtcNow + Bound;
        while (true)
        {
            try
            {
                return await operation().AsTask().WaitAsync(Bound);
            }
            catch (LaharsubStoreUnavailableException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(50);
            }
        }
    }

    /// <summary>What the publisher was acknowledged, what the reader read and what it was told, per topic and epoch.</summary>
    private sealed class Run(List<long> topics)
    {
        private readonly ConcurrentQueue<(DateTime At, int Count)> _acks = new();
        public int Unavailable;

        public List<long> Topics { get; } = topics;

        public ConcurrentDictionary<(long Topic, string Epoch, long Id), string> Acknowledged { get; } = new();

        public ConcurrentDictionary<(long Topic, string Epoch, long Id), string> Received { get; } = new();

        public ConcurrentQueue<(string Kind, long Topic, string Epoch, long From)> Notices { get; } = new();

        public Dictionary<long, Cursor> Cursors { get; } = topics.ToDictionary(topic => topic, _ => new Cursor());

        public int AcknowledgedTo(long topic) => Acknowledged.Keys.Count(key => key.Topic == topic);

        public void Acknowledge(long topic, string epoch, long id, string body)
        {
            Acknowledged[(topic, epoch, id)] = body;
            _acks.Enqueue((DateTime.UtcNow, Acknowledged.Count));
        }

        /// <summary>The outage as the publisher saw it: the longest time between two acknowledgements.</summary>
        public TimeSpan LongestPauseBetweenAcknowledgements()
        {
            var times = _acks.Select(ack => ack.At).Order().ToList();
            return times.Zip(times.Skip(1), (before, after) => after - before).DefaultIfEmpty().Max();
        }

        /// <summary>The protocol's cursor rules (docs/protocol.md): a reset or gap is recorded as a notice from the cursor on.</summary>
        public void Apply(long topic, TopicReadResult result, List<Message> messages)
        {
            var cursor = Cursors[topic];
            if (!result.Exists)
            {
                Notices.Enqueue(("topicDeleted", topic, cursor.Epoch ?? "", cursor.Next));
                cursor.Epoch = null;
                cursor.Next = 1;
                return;
            }
            if (cursor.Epoch is not null && cursor.Epoch != result.Epoch)
            {
                Notices.Enqueue(("epochChanged", topic, cursor.Epoch, cursor.Next));
                (cursor.Epoch, cursor.Next) = (result.Epoch, result.FirstRetainedMessageId);
                return;
            }
            cursor.Epoch = result.Epoch;
            if (cursor.Next > result.LastMessageId + 1)
            {
                Notices.Enqueue(("beyondEnd", topic, cursor.Epoch, result.LastMessageId + 1));
                cursor.Next = result.FirstRetainedMessageId;
                return;
            }
            if (cursor.Next < result.FirstRetainedMessageId)
            {
                Notices.Enqueue(("gap", topic, cursor.Epoch, cursor.Next));
            }
            var id = Math.Max(cursor.Next, result.FirstRetainedMessageId);
            foreach (var message in messages)
            {
                Received[(topic, cursor.Epoch, id)] = Encoding.UTF8.GetString(message.Body.Span);
                cursor.Next = ++id;
            }
        }

        public async Task<bool> CaughtUpAsync(ILaharsubStore store)
        {
            foreach (var topic in Topics)
            {
                var info = await store.GetTopicAsync(topic).AsTask().WaitAsync(Bound);
                if (info is null || Cursors[topic].Epoch != info.Epoch || Cursors[topic].Next != info.LastMessageId + 1)
                {
                    return false;
                }
            }
            return true;
        }
    }

    private sealed class Cursor
    {
        public string? Epoch { get; set; }

        public long Next { get; set; } = 1;
    }
}
