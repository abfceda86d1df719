using System.Globalization;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// The generator's half of tail attribution (--slow-log): the window's slow deliveries with their wall-clock
/// intervals, and the generator's own GC pauses from its runtime's events.
/// </summary>
public sealed class SlowLogTests : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);
    private static readonly string[] Generations = ["0", "1", "2", ""];
    private static readonly string[] PauseTypes = ["blocking", "background", "foreground", "background-pause"];

    private readonly DirectoryInfo _directory = Directory.CreateTempSubdirectory("laharsub-slowlog-");

    public void Dispose() => _directory.Delete(recursive: true);

    [Fact]
    public void AFixedThresholdKeepsTheDeliveriesAtOrAboveItInTheOrderTheyWereCreated()
    {
        var window = new LatencyHistogram();
        var log = new SlowLog(thresholdMicroseconds: 5_000);
        var origin = MonotonicClock.NowMicroseconds;
        // Offered in the order they arrive: a later message can beat an earlier, slower one.
        (long Created, long Latency, TransportKind Transport)[] deliveries =
            [(origin + 300, 4_999, TransportKind.LongPoll), (origin + 200, 7_000, TransportKind.Sse), (origin + 100, 5_000, TransportKind.WebSocket), (origin + 400, 10, TransportKind.Sse)];
        foreach (var (created, latency, transport) in deliveries)
        {
            window.Record(latency);
            log.Offer(new SlowDelivery(created, created + latency, TopicId: 40 + created - origin, transport, Client: 7), window);
        }

        var rows = Write(log, log.ThresholdMicroseconds(window));

        Assert.Equal(SlowLog.Header, rows[0]);
        Assert.Equal(
        [
            $"{MonotonicClock.ToUnixMicroseconds(origin + 100)},{MonotonicClock.ToUnixMicroseconds(origin + 5_100)},5000,140,websocket,7",
            $"{MonotonicClock.ToUnixMicroseconds(origin + 200)},{MonotonicClock.ToUnixMicroseconds(origin + 7_200)},7000,240,sse,7",
        ], rows[1..]);
    }

    [Fact]
    public void WithoutAThresholdTheWindowsNinetyNinthPercentileIsTheCut()
    {
        var window = new LatencyHistogram();
        var log = new SlowLog(thresholdMicroseconds: null);
        var origin = MonotonicClock.NowMicroseconds;
        // Rising latencies: the floor kept while recording (half of the percentile so far) must not lose the last ones.
        for (var i = 1; i <= 20_000; i++)
        {
            window.Record(i);
            log.Offer(new SlowDelivery(origin + i, origin + 2 * i, TopicId: 1, TransportKind.LongPoll, Client: 0), window);
        }

        var threshold = log.ThresholdMicroseconds(window);
        var latencies = Write(log, threshold)[1..].Select(row => long.Parse(row.Split(',')[2], CultureInfo.InvariantCulture)).ToList();

        Assert.InRange(threshold, 19_780, 19_820);
        Assert.Equal(20_000 - threshold + 1, latencies.Count);
        Assert.All(latencies, latency => Assert.True(latency >= threshold, $"{latency} µs is below the cut {threshold} µs"));
        Assert.Equal(0, log.Dropped);
    }

    [Fact]
    public async Task TheGeneratorsOwnGcPausesAreWrittenWithTheirWallClockTimes()
    {
        var path = Path.Combine(_directory.FullName, "slow.client-gc.csv");
        var before = UnixMicrosecondsNow();
        using (var log = new ClientGcLog(path))
        {
            // The runtime hands its events to listeners from a thread of its own, a moment after they happen.
            using var deadline = new CancellationTokenSource(Bound);
            while (log.Pauses == 0)
            {
                GC.Collect(0, GCCollectionMode.Forced, blocking: true);
                await Task.Delay(50, deadline.Token);
            }
        }
        var after = UnixMicrosecondsNow();

        var rows = File.ReadAllLines(path);
        Assert.Equal(GcPauseCsv.Header, rows[0]);
        var cells = rows[1].Split(',');
        var (start, end) = (long.Parse(cells[0], CultureInfo.InvariantCulture), long.Parse(cells[1], CultureInfo.InvariantCulture));
        // A millisecond for the runtime's conversion of its event times to UTC, which reads the two clocks one after the other.
        Assert.True(before - 1_000 <= start && start <= end && end <= after + 1_000, $"a pause from {start} to {end} µs, recorded between {before} and {after} µs");
        Assert.Equal(end - start, long.Parse(cells[2], CultureInfo.InvariantCulture));
        // Other tests of the process collect too: the first pause seen may be any generation's.
        Assert.Contains(cells[3], Generations);
        Assert.Contains(cells[4], PauseTypes);
    }

    private string[] Write(SlowLog log, long threshold)
    {
        var path = Path.Combine(_directory.FullName, "slow.csv");
        using (var writer = new StreamWriter(path))
        {
            log.Write(writer, threshold);
        }
        return File.ReadAllLines(path);
    }

    private static long UnixMicrosecondsNow() => (DateTime.UtcNow - DateTime.UnixEpoch).Ticks / 10;
}
