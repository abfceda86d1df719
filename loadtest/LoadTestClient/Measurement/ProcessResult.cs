namespace Laharsub.LoadTestClient.Measurement;

/// <summary>
/// What one load-generating process measured in a run; results of several processes are merged by
/// adding counts and histograms (<see cref="Merge"/>).
/// </summary>
internal sealed record ProcessResult
{
    public int Clients { get; init; }
    public long PublishesAttempted { get; init; }
    public long PublishesAccepted { get; init; }
    public long PublishesFailed { get; init; }
    public long DeliveriesMeasured { get; init; }
    public long DeliveriesTotal { get; init; }
    public long Polls { get; init; }
    public long EmptyPolls { get; init; }

    /// <summary>Streams or sockets opened (--transport sse, websocket): one per client, and one more per reconnection.</summary>
    public long StreamsOpened { get; init; }
    public long Lost { get; init; }
    public long Duplicates { get; init; }
    public long OutOfOrder { get; init; }
    public long GapNotices { get; init; }
    public long GapMessages { get; init; }
    public long Resets { get; init; }

    /// <summary>Reset notices with reason <c>epochChanged</c>, counted apart from <see cref="Resets"/>; never deliveries.</summary>
    public long EpochResets { get; init; }
    public long TopicDeletedNotices { get; init; }
    public long TransportErrors { get; init; }

    /// <summary>Unexpected HTTP statuses by code; "0" counts responses that could not be read.</summary>
    public Dictionary<string, long> HttpErrors { get; init; } = [];

    public long BytesSent { get; init; }
    public long BytesReceived { get; init; }

    /// <summary>CPU time the generator process(es) used during the measured window.</summary>
    public double CpuSeconds { get; init; }

    /// <summary>Length of the measured window (shorter than planned when interrupted).</summary>
    public double WindowSeconds { get; init; }

    public bool Interrupted { get; init; }

    /// <summary>Time the generator process(es) spent paused by their own GC during the window (summed over processes).</summary>
    public double GcPauseMs { get; init; }

    /// <summary>The generator's garbage collections in the window, by generation 0, 1, 2.</summary>
    public int[] GcCollections { get; init; } = [0, 0, 0];

    public required HistogramData Latency { get; init; }
    public required HistogramData LatencyFromSchedule { get; init; }
    public required HistogramData ScheduleLag { get; init; }
    public required HistogramData PublishRoundTrip { get; init; }

    public static ProcessResult Merge(IReadOnlyList<ProcessResult> results)
    {
        if (results.Count == 1)
        {
            return results[0];
        }
        HistogramData MergeHistograms(Func<ProcessResult, HistogramData> select)
        {
            var merged = new LatencyHistogram();
            foreach (var result in results)
            {
                merged.Add(LatencyHistogram.FromData(select(result)));
            }
            return merged.ToData();
        }
        var errors = new Dictionary<string, long>();
        foreach (var (status, count) in results.SelectMany(r => r.HttpErrors))
        {
            errors[status] = errors.GetValueOrDefault(status) + count;
        }
        return new ProcessResult
        {
            Clients = results.Sum(r => r.Clients),
            PublishesAttempted = results.Sum(r => r.PublishesAttempted),
            PublishesAccepted = results.Sum(r => r.PublishesAccepted),
            PublishesFailed = results.Sum(r => r.PublishesFailed),
            DeliveriesMeasured = results.Sum(r => r.DeliveriesMeasured),
            DeliveriesTotal = results.Sum(r => r.DeliveriesTotal),
            Polls = results.Sum(r => r.Polls),
            EmptyPolls = results.Sum(r => r.EmptyPolls),
            StreamsOpened = results.Sum(r => r.StreamsOpened),
            Lost = results.Sum(r => r.Lost),
            Duplicates = results.Sum(r => r.Duplicates),
            OutOfOrder = results.Sum(r => r.OutOfOrder),
            GapNotices = results.Sum(r => r.GapNotices),
            GapMessages = results.Sum(r => r.GapMessages),
            Resets = results.Sum(r => r.Resets),
            EpochResets = results.Sum(r => r.EpochResets),
            TopicDeletedNotices = results.Sum(r => r.TopicDeletedNotices),
            TransportErrors = results.Sum(r => r.TransportErrors),
            HttpErrors = errors,
            BytesSent = results.Sum(r => r.BytesSent),
            BytesReceived = results.Sum(r => r.BytesReceived),
            CpuSeconds = results.Sum(r => r.CpuSeconds),
            WindowSeconds = results.Max(r => r.WindowSeconds),
            Interrupted = results.Any(r => r.Interrupted),
            GcPauseMs = results.Sum(r => r.GcPauseMs),
            GcCollections = [.. Enumerable.Range(0, 3).Select(g => results.Sum(r => r.GcCollections[g]))],
            Latency = MergeHistograms(r => r.Latency),
            LatencyFromSchedule = MergeHistograms(r => r.LatencyFromSchedule),
            ScheduleLag = MergeHistograms(r => r.ScheduleLag),
            PublishRoundTrip = MergeHistograms(r => r.PublishRoundTrip),
        };
    }
}

/// <summary>A latency distribution in milliseconds, as reported.</summary>
internal sealed record LatencySummary(long Count, double MeanMs, double StdDevMs, double MinMs, double P50Ms, double P90Ms,
    double P99Ms, double P999Ms, double MaxMs)
{
    public static LatencySummary From(HistogramData data)
    {
        var h = LatencyHistogram.FromData(data);
        static double Ms(double microseconds) => Math.Round(microseconds / 1000, 3);
        return new LatencySummary(h.TotalCount, Ms(h.Mean), Ms(h.StandardDeviation), Ms(h.Min), Ms(h.ValueAtPercentile(50)),
            Ms(h.ValueAtPercentile(90)), Ms(h.ValueAtPercentile(99)), Ms(h.ValueAtPercentile(99.9)), Ms(h.Max));
    }
}
