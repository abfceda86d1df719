using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;
using Laharsub.Client;

// The seed1 chat workload (N topics, 2 clients per topic, each publishing every second and long-polling
// its topic) through the .NET client, built to carry on across server restarts: a topic that is gone
// (404, 412, a notice, an epoch change) is created again and both its clients move to the new one. It
// counts what the clients saw: failed requests, retries, recreated topics, acknowledged messages that
// never arrived and messages that arrived twice, and every stretch longer than --outage-threshold during
// which a client published nothing or received nothing (faults.sh relates them to its kill times).

const string Usage = """
    Usage: Laharsub.FaultClient --url URL[,URL...] --duration SECONDS --out DIR [--topics N] [--interval SECONDS]
                                [--outage-threshold SECONDS]
      --url        The API root(s), e.g. http://127.0.0.1:5000/ps/ ; several for instances on one store (failover).
      --topics     Topics (default 200); 2 clients per topic.
      --interval   Each client's publish interval (default 1).
      --duration   How long the clients publish; they then read for 5 s more to drain.
      --outage-threshold  A client without a successful publish or a delivery for longer than this has an
                   outage recorded (default 2.5).
      --out        Writes summary.json, outages.csv (kind,client,start_ms,end_ms) and timeline.csv (per second).
    """;

var arguments = ParseArguments(args);
if (arguments is null)
{
    Console.Error.WriteLine(Usage);
    return 2;
}
var (urls, topicCount, interval, duration, outageThreshold, outDir) = arguments.Value;
Directory.CreateDirectory(outDir);

var options = new LaharsubClientOptions();
await using var client = urls.Length == 1 ? new LaharsubClient(urls[0], options) : new LaharsubClient(urls, options);
var stats = new Stats(duration + 60);
var slots = new Slot[topicCount];
for (var i = 0; i < topicCount; i++)
{
    slots[i] = new Slot(i);
    await slots[i].RecreateAsync(client, expectedGeneration: 0, stats, CancellationToken.None);
}
Console.WriteLine($"{topicCount} topics created at {string.Join(", ", urls.Select(u => u.ToString()))}; running {duration} s");

using var publishing = new CancellationTokenSource(TimeSpan.FromSeconds(duration));
using var reading = new CancellationTokenSource(TimeSpan.FromSeconds(duration + 5));
var clients = Enumerable.Range(0, topicCount * 2).Select(i => new SimClient(i, slots[i / 2])).ToArray();
var tasks = new List<Task>();
foreach (var c in clients)
{
    tasks.Add(c.PublishLoopAsync(client, interval, stats, outageThreshold, publishing.Token));
    tasks.Add(c.ReadLoopAsync(client, stats, outageThreshold, reading.Token));
}
var progress = Task.Run(async () =>
{
    while (!reading.IsCancellationRequested)
    {
        await Task.Delay(5000).ConfigureAwait(false);
        Console.WriteLine(stats.Line());
    }
});
await Task.WhenAll(tasks);
foreach (var c in clients)
{
    c.CloseOutages(stats, outageThreshold);
}

// Loss and duplication, per topic incarnation: every acknowledged message must reach both clients of
// the topic, once.
long acknowledged = 0, lost = 0, failedButDelivered = 0;
// Every topic is created again after each restart of an in-memory server, so generation g of the topics
// ended with the g-th fault: this says which fault lost what.
var lostByGeneration = new SortedDictionary<int, long>();
foreach (var slot in slots)
{
    foreach (var (generation, acked) in slot.Acknowledged)
    {
        acknowledged += acked.Count;
        foreach (var reader in clients.Where(c => c.Slot == slot))
        {
            var received = reader.Received.TryGetValue(generation, out var set) ? set : [];
            var missing = acked.Keys.Count(body => !received.ContainsKey(body));
            lost += missing;
            if (missing > 0)
            {
                lostByGeneration[generation] = lostByGeneration.GetValueOrDefault(generation) + missing;
            }
        }
    }
    foreach (var (generation, failed) in slot.Failed)
    {
        foreach (var reader in clients.Where(c => c.Slot == slot))
        {
            if (reader.Received.TryGetValue(generation, out var set))
            {
                failedButDelivered += failed.Keys.Count(set.ContainsKey);
            }
        }
    }
}
var summary = new Dictionary<string, object>
{
    ["urls"] = string.Join(",", urls.Select(u => u.ToString())),
    ["topics"] = topicCount,
    ["clients"] = clients.Length,
    ["durationSeconds"] = duration,
    ["publishesAcknowledged"] = acknowledged,
    ["publishesFailed"] = stats.PublishFailures,
    ["publishFailuresByKind"] = stats.FailureKinds.ToDictionary(p => p.Key, p => p.Value),
    ["failedPublishesDeliveredAnyway"] = failedButDelivered,
    ["deliveries"] = stats.Deliveries,
    ["acknowledgedButNotDelivered"] = lost,
    ["acknowledgedButNotDeliveredByTopicGeneration"] = lostByGeneration.ToDictionary(p => p.Key.ToString(CultureInfo.InvariantCulture), p => p.Value),
    ["deliveredTwice"] = stats.Duplicates,
    ["pollRetries"] = stats.PollRetries,
    ["pollRetryCausesByKind"] = stats.RetryKinds.ToDictionary(p => p.Key, p => p.Value),
    ["gapNotices"] = stats.Gaps,
    ["topicsRecreated"] = stats.Recreations - topicCount,
    ["topicLostSignals"] = stats.LostSignals.ToDictionary(p => p.Key, p => p.Value),
    ["outages"] = stats.Outages.Count,
};
var json = JsonSerializer.Serialize(summary, new JsonSerializerOptions { WriteIndented = true });
File.WriteAllText(Path.Combine(outDir, "summary.json"), json);
Console.WriteLine(json);
File.WriteAllLines(Path.Combine(outDir, "outages.csv"),
    ["kind,client,start_ms,end_ms", .. stats.Outages.Select(o => string.Create(CultureInfo.InvariantCulture, $"{o.Kind},{o.Client},{o.StartMs},{o.EndMs}"))]);
File.WriteAllLines(Path.Combine(outDir, "timeline.csv"), stats.Timeline());
foreach (var slot in slots)
{
    slot.Dispose();
}
return 0;

static (Uri[] Urls, int Topics, double Interval, int Duration, double OutageThreshold, string Out)? ParseArguments(string[] args)
{
    var values = new Dictionary<string, string>();
    for (var i = 0; i + 1 < args.Length; i += 2)
    {
        values[args[i]] = args[i + 1];
    }
    if (!values.TryGetValue("--url", out var url) || !values.TryGetValue("--duration", out var duration) || !values.TryGetValue("--out", out var output))
    {
        return null;
    }
    var urls = url.Split(',', StringSplitOptions.RemoveEmptyEntries).Select(u => new Uri(u.EndsWith('/') ? u : u + "/")).ToArray();
    return (urls,
        int.Parse(values.GetValueOrDefault("--topics", "200"), CultureInfo.InvariantCulture),
        double.Parse(values.GetValueOrDefault("--interval", "1"), CultureInfo.InvariantCulture),
        int.Parse(duration, CultureInfo.InvariantCulture),
        double.Parse(values.GetValueOrDefault("--outage-threshold", "2.5"), CultureInfo.InvariantCulture),
        output);
}

/// <summary>One topic of the workload, through its incarnations: created again whenever it is lost.</summary>
internal sealed class Slot(int index) : IDisposable
{
    private readonly SemaphoreSlim _gate = new(1, 1);

    public int Index { get; } = index;
    public volatile Incarnation Current = new(0, null, 0);
    public ConcurrentDictionary<int, ConcurrentDictionary<string, byte>> Acknowledged { get; } = new();
    public ConcurrentDictionary<int, ConcurrentDictionary<string, byte>> Failed { get; } = new();

    /// <summary>Creates the topic again unless another client already did since <paramref name="expectedGeneration"/>.</summary>
    public async Task RecreateAsync(LaharsubClient client, int expectedGeneration, Stats stats, CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            while (Current.Generation == expectedGeneration)
            {
                try
                {
                    var created = await client.CreateTopicWithEpochAsync(cancellationToken).ConfigureAwait(false);
                    Current = new Incarnation(created.TopicId, created.Epoch, expectedGeneration + 1);
                    Interlocked.Increment(ref stats.Recreations);
                }
                catch (Exception e) when (e is not OperationCanceledException)
                {
                    await Task.Delay(200, cancellationToken).ConfigureAwait(false);
                }
            }
        }
        finally
        {
            _gate.Release();
        }
    }

    public void Dispose() => _gate.Dispose();
}

internal sealed record Incarnation(long TopicId, string? Epoch, int Generation);

/// <summary>One simulated chat client: publishes to its topic on a schedule and long-polls it.</summary>
internal sealed class SimClient(int index, Slot slot)
{
    private long _lastPublishMs = Stats.NowMs();
    private long _lastDeliveryMs = Stats.NowMs();

    public int Index { get; } = index;
    public Slot Slot { get; } = slot;
    public ConcurrentDictionary<int, ConcurrentDictionary<string, byte>> Received { get; } = new();

    public async Task PublishLoopAsync(LaharsubClient client, double intervalSeconds, Stats stats, double outageThreshold, CancellationToken cancellationToken)
    {
        var period = TimeSpan.FromSeconds(intervalSeconds);
        // Spread the clients' publishes over the interval, as the LoadTestClient does.
        await Task.Delay(TimeSpan.FromSeconds(intervalSeconds * Random.Shared.NextDouble()), CancellationToken.None).ConfigureAwait(false);
        using var timer = new PeriodicTimer(period);
        var sequence = 0;
        try
        {
            do
            {
                var target = Slot.Current;
                var body = string.Create(CultureInfo.InvariantCulture, $"{Index}:{++sequence}");
                try
                {
                    await client.PublishAsync(target.TopicId, Encoding.UTF8.GetBytes(body), "text/plain",
                        new PublishOptions { ExpectedEpoch = target.Epoch }, cancellationToken).ConfigureAwait(false);
                    Slot.Acknowledged.GetOrAdd(target.Generation, _ => new())[body] = 0;
                    var now = Stats.NowMs();
                    stats.Mark(now, Stats.Column.PublishOk);
                    RecordOutage(stats, "publish", ref _lastPublishMs, now, outageThreshold);
                }
                catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
                {
                    break;
                }
                catch (Exception e)
                {
                    Slot.Failed.GetOrAdd(target.Generation, _ => new())[body] = 0;
                    stats.PublishFailed(Stats.NowMs(), Stats.Kind(e));
                    if (e is EpochMismatchException || e is LaharsubException { StatusCode: HttpStatusCode.NotFound })
                    {
                        stats.TopicLost(e is EpochMismatchException ? "publish412" : "publish404");
                        await Slot.RecreateAsync(client, target.Generation, stats, cancellationToken).ConfigureAwait(false);
                    }
                }
            }
            while (await timer.WaitForNextTickAsync(cancellationToken).ConfigureAwait(false));
        }
        catch (OperationCanceledException)
        {
        }
    }

    public async Task ReadLoopAsync(LaharsubClient client, Stats stats, double outageThreshold, CancellationToken cancellationToken)
    {
        var following = Slot.Current;
        await using var subscription = client.Subscribe();
        subscription.Retrying += (_, retry) => stats.PollRetried(Stats.NowMs(), Stats.Kind(retry.Error));
        subscription.Add(following.TopicId, 1, following.Epoch);
        try
        {
            await foreach (var item in subscription.ReadAllAsync(cancellationToken).ConfigureAwait(false))
            {
                if (item.TopicId != following.TopicId)
                {
                    continue;
                }
                switch (item)
                {
                    case LaharsubMessage message when message.Epoch == following.Epoch:
                        var body = message.GetString();
                        if (!Received.GetOrAdd(following.Generation, _ => new()).TryAdd(body, 0))
                        {
                            Interlocked.Increment(ref stats.Duplicates);
                        }
                        var now = Stats.NowMs();
                        stats.Mark(now, Stats.Column.Delivery);
                        RecordOutage(stats, "delivery", ref _lastDeliveryMs, now, outageThreshold);
                        break;
                    case GapNotice:
                        Interlocked.Increment(ref stats.Gaps);
                        break;
                    case ResetNotice { EpochChanged: false }:
                        // The cursor is beyond the end: the topic lost messages it had (a store that lost
                        // data keeps no epoch of its own); read it on from where it is now.
                        stats.TopicLost("resetBeyondEnd");
                        break;
                    case ResetNotice or TopicNotFoundNotice or TopicDeletedNotice:
                        stats.TopicLost(item.GetType().Name);
                        await Slot.RecreateAsync(client, following.Generation, stats, cancellationToken).ConfigureAwait(false);
                        var current = Slot.Current;
                        if (item is ResetNotice reset && reset.TopicId == current.TopicId && reset.Epoch == current.Epoch)
                        {
                            // The id's new incarnation is this topic's new one: the subscription reads it
                            // on from its first message already (within this very answer).
                            following = current;
                            break;
                        }
                        subscription.Remove(following.TopicId);
                        following = current;
                        subscription.Add(following.TopicId, 1, following.Epoch);
                        break;
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    public void CloseOutages(Stats stats, double outageThreshold)
    {
        var now = Stats.NowMs();
        RecordOutage(stats, "publish-end", ref _lastPublishMs, now, outageThreshold + 6);
        RecordOutage(stats, "delivery-end", ref _lastDeliveryMs, now, outageThreshold + 6);
    }

    private void RecordOutage(Stats stats, string kind, ref long last, long now, double thresholdSeconds)
    {
        if (now - last > thresholdSeconds * 1000)
        {
            stats.Outages.Add(new Outage(kind, Index, last, now));
        }
        last = now;
    }
}

internal sealed record Outage(string Kind, int Client, long StartMs, long EndMs);

/// <summary>Counters and a per-second timeline, shared by all clients.</summary>
internal sealed class Stats(int seconds)
{
    public enum Column { PublishOk, PublishFail, Delivery, PollRetry }

    private readonly long _startMs = NowMs();
    private readonly long[,] _timeline = new long[seconds, 4];
    public long Deliveries, Duplicates, Gaps, PollRetries, PublishFailures, Recreations;
    public ConcurrentDictionary<string, long> FailureKinds { get; } = new();
    public ConcurrentDictionary<string, long> RetryKinds { get; } = new();
    public ConcurrentDictionary<string, long> LostSignals { get; } = new();
    public ConcurrentBag<Outage> Outages { get; } = [];

    public static long NowMs() => DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();

    public static string Kind(Exception e) => e switch
    {
        LaharsubException l => "http" + (int)l.StatusCode,
        HttpRequestException { InnerException: System.Net.Sockets.SocketException s } => s.SocketErrorCode.ToString(),
        HttpRequestException h when h.HttpRequestError != HttpRequestError.Unknown => h.HttpRequestError.ToString(),
        _ => e.GetType().Name,
    };

    public void Mark(long nowMs, Column column)
    {
        if (column == Column.Delivery)
        {
            Interlocked.Increment(ref Deliveries);
        }
        var second = (int)((nowMs - _startMs) / 1000);
        if (second >= 0 && second < _timeline.GetLength(0))
        {
            Interlocked.Increment(ref _timeline[second, (int)column]);
        }
    }

    public void PublishFailed(long nowMs, string kind)
    {
        Interlocked.Increment(ref PublishFailures);
        FailureKinds.AddOrUpdate(kind, 1, (_, n) => n + 1);
        Mark(nowMs, Column.PublishFail);
    }

    public void PollRetried(long nowMs, string kind)
    {
        Interlocked.Increment(ref PollRetries);
        RetryKinds.AddOrUpdate(kind, 1, (_, n) => n + 1);
        Mark(nowMs, Column.PollRetry);
    }

    public void TopicLost(string signal) => LostSignals.AddOrUpdate(signal, 1, (_, n) => n + 1);

    public string Line() => string.Create(CultureInfo.InvariantCulture,
        $"{DateTimeOffset.UtcNow:HH:mm:ss} deliveries {Interlocked.Read(ref Deliveries)} publish failures {Interlocked.Read(ref PublishFailures)} poll retries {Interlocked.Read(ref PollRetries)} recreated {Interlocked.Read(ref Recreations)} dup {Interlocked.Read(ref Duplicates)}");

    public IEnumerable<string> Timeline()
    {
        yield return "unix_time,publish_ok,publish_fail,deliveries,poll_retries";
        for (var s = 0; s < _timeline.GetLength(0); s++)
        {
            yield return string.Create(CultureInfo.InvariantCulture,
                $"{_startMs / 1000 + s},{_timeline[s, 0]},{_timeline[s, 1]},{_timeline[s, 2]},{_timeline[s, 3]}");
        }
    }
}
