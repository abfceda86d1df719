using Laharsub.LoadTestClient.Hosting;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>What a progress line shows, from one process or summed over several.</summary>
internal sealed record ProgressSnapshot(int Clients, int Connections, int PollsWaiting, long Deliveries, long Publishes, double P99Ms, bool Measuring);

/// <summary>
/// The life of one process's share of a run, the same whether it is the only process or one of
/// several: connect every client, wait for the common start time, run the schedule, stop the polls,
/// and hand back what was measured.
/// </summary>
internal static class EngineSession
{
    public static async Task<ProcessResult> RunAsync(LoadEngine engine, Func<CancellationToken, Task<long>> waitForStart, CancellationToken stop)
    {
        using var stopLoops = CancellationTokenSource.CreateLinkedTokenSource(stop);
        List<Task> loops = [];
        double cpuAtStart = 0, cpuAtEnd = 0;
        var gcAtStart = GcSnapshot.Take();
        var gcAtEnd = gcAtStart;
        long windowStart = 0, windowEnd = 0;
        try
        {
            Task? schedule = null;
            try
            {
                loops = await engine.ConnectAsync(TimeSpan.FromSeconds(180), stopLoops.Token).ConfigureAwait(false);
                var start = await waitForStart(stop).ConfigureAwait(false);
                schedule = engine.RunScheduleAsync(start, stop);
                await SleepUntilAsync(engine.MeasureStart, stop).ConfigureAwait(false);
                windowStart = MonotonicClock.NowMicroseconds;
                cpuAtStart = OwnCpuSeconds();
                gcAtStart = GcSnapshot.Take();
                await SleepUntilAsync(engine.MeasureEnd, stop).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                // Ctrl-C: the schedule stops and drains briefly; what was measured is still reported.
            }
            if (windowStart != 0)
            {
                cpuAtEnd = OwnCpuSeconds();
                gcAtEnd = GcSnapshot.Take();
                // The window is the schedule's (cut short by Ctrl-C), however late this thread woke.
                windowStart = engine.MeasureStart;
                windowEnd = Math.Min(MonotonicClock.NowMicroseconds, engine.MeasureEnd);
            }
            if (schedule is not null)
            {
                await schedule.ConfigureAwait(false);
            }
        }
        finally
        {
            stopLoops.Cancel();
            try
            {
                await Task.WhenAll(loops).WaitAsync(TimeSpan.FromSeconds(15), CancellationToken.None).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                // A loop stuck in a read would keep its connection; the process is about to end anyway.
            }
        }
        return ToResult(engine, stop.IsCancellationRequested, cpuAtEnd - cpuAtStart, Math.Max(0, windowEnd - windowStart) / 1e6) with
        {
            GcPauseMs = (gcAtEnd.Pause - gcAtStart.Pause).TotalMilliseconds,
            GcCollections = [gcAtEnd.Gen0 - gcAtStart.Gen0, gcAtEnd.Gen1 - gcAtStart.Gen1, gcAtEnd.Gen2 - gcAtStart.Gen2],
        };
    }

    public static ProgressSnapshot Progress(LoadEngine engine)
    {
        var latency = engine.Measuring ? engine.Latency : engine.WarmupLatency;
        return new ProgressSnapshot(engine.ClientCount, engine.Http.OpenConnections, engine.PollsWaiting, engine.DeliveriesTotal,
            engine.PublishesStarted, latency.ValueAtPercentile(99) / 1000.0, engine.Measuring);
    }

    private static ProcessResult ToResult(LoadEngine engine, bool interrupted, double cpuSeconds, double windowSeconds)
    {
        var counters = engine.Counters;
        return new ProcessResult
        {
            Clients = engine.ClientCount,
            PublishesAttempted = engine.PublishesAttempted,
            PublishesAccepted = engine.PublishesAccepted,
            PublishesFailed = engine.PublishesFailed,
            DeliveriesMeasured = engine.DeliveriesMeasured,
            DeliveriesTotal = engine.DeliveriesTotal,
            Polls = engine.Polls,
            EmptyPolls = engine.EmptyPolls,
            StreamsOpened = engine.StreamsOpened,
            Lost = counters.Lost,
            Duplicates = counters.Duplicates,
            OutOfOrder = counters.OutOfOrder,
            GapNotices = counters.GapNotices,
            GapMessages = counters.GapMessages,
            Resets = counters.Resets,
            EpochResets = counters.EpochResets,
            TopicDeletedNotices = counters.DeletedNotices,
            TransportErrors = counters.TransportErrors,
            HttpErrors = counters.StatusCounts(),
            BytesSent = engine.Http.BytesSent,
            BytesReceived = engine.Http.BytesReceived,
            CpuSeconds = cpuSeconds,
            WindowSeconds = windowSeconds,
            Interrupted = interrupted,
            Latency = engine.Latency.ToData(),
            LatencyFromSchedule = engine.LatencyFromSchedule.ToData(),
            ScheduleLag = engine.ScheduleLag.ToData(),
            PublishRoundTrip = engine.PublishRoundTrip.ToData(),
        };
    }

    /// <summary>The generator's own garbage collections: their pauses stall every simulated client at once.</summary>
    private readonly record struct GcSnapshot(TimeSpan Pause, int Gen0, int Gen1, int Gen2)
    {
        public static GcSnapshot Take() => new(GC.GetTotalPauseDuration(), GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2));
    }

    private static double OwnCpuSeconds() => ProcessSampler.Read(Environment.ProcessId, 0)?.CpuSeconds ?? 0;

    private static async Task SleepUntilAsync(long microseconds, CancellationToken cancellationToken)
    {
        var wait = microseconds - MonotonicClock.NowMicroseconds;
        if (wait > 0)
        {
            await Task.Delay(TimeSpan.FromMicroseconds(wait), cancellationToken).ConfigureAwait(false);
        }
    }
}
