using Laharsub.LoadTestClient.Hosting;
using Laharsub.Server.Tests.Support;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// loadtest/scripts/tail_attribution.py on small files whose answer is known: each slow delivery gets the first
/// cause that holds over its interval (a server GC pause, the generator's own, a queued thread pool), else none.
/// </summary>
public sealed class TailAttributionTests : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    /// <summary>An arbitrary moment (2025-12-06 05:46:40 UTC), in µs: the files' times are offsets from it.</summary>
    private const long T = 1_765_000_000_000_000;

    private readonly DirectoryInfo _directory = Directory.CreateTempSubdirectory("laharsub-tail-");

    public void Dispose() => _directory.Delete(recursive: true);

    [Fact]
    public async Task EachSlowDeliveryGetsTheFirstCauseThatHoldsOverItsInterval()
    {
        var slow = Write("slow.csv", "created_utc_us,received_utc_us,latency_us,topic,transport,client",
            Delivery(1_000, 50_000, topic: 1),     // a server pause and a client pause both overlap: the server's comes first
            Delivery(200_000, 230_000, topic: 2),  // the client's pause only
            Delivery(300_000, 320_000, topic: 3),  // a server pause that ended as it was created: no overlap
            Delivery(500_000, 520_000, topic: 4),  // a sample of that interval saw 40 items queued
            Delivery(800_000, 810_000, topic: 5),  // the queue at the threshold, not above it
            Delivery(905_000, 910_000, topic: 6)); // nothing
        var serverGc = Write("server-gc.csv", "start_utc_us,end_utc_us,pause_us,generation,type,promoted_bytes",
            Pause(5_000, 48_000, generation: 0), Pause(290_000, 300_000, generation: 1));
        var clientGc = Write("client-gc.csv", "start_utc_us,end_utc_us,pause_us,generation,type,promoted_bytes",
            Pause(40_000, 45_000, generation: 0), Pause(210_000, 215_000, generation: 0));
        var counters = Write("counters.csv", "sample_utc_us,interval_us,threadpool-queue-length,threadpool-completed-items-count",
            Sample(100_000, 0), Sample(200_000, 0), Sample(300_000, 0), Sample(400_000, 0), Sample(600_000, 40), Sample(700_000, 0),
            Sample(800_000, 0), Sample(900_000, 10), Sample(1_000_000, 0));
        var attributed = Path.Combine(_directory.FullName, "attributed.csv");

        var (exit, output) = await RunAsync("--slow", slow, "--server-gc", serverGc, "--client-gc", clientGc, "--counters", counters,
            "--queue-threshold", "10", "--csv", attributed);

        Assert.True(exit == 0, output);
        var causes = File.ReadAllLines(attributed).Skip(1).Select(line => line.Split(',')).ToDictionary(cells => cells[3], cells => cells[6]);
        Assert.Equal(new Dictionary<string, string>
        {
            ["1"] = "server-gc", ["2"] = "client-gc", ["3"] = "unattributed", ["4"] = "threadpool-queue", ["5"] = "unattributed", ["6"] = "unattributed",
        }, causes);
        Assert.Contains("6 slow deliveries (from 5.000 ms)", output);
        Assert.Matches(@"server-gc\s+1\s+16\.7%\s+49\.000\s+49\.000", output);
        Assert.Matches(@"unattributed\s+3\s+50\.0%\s+10\.000\s+20\.000", output);
        Assert.Contains("gen0 blocking 43.0 ms at 05:46:40.005000", output);
    }

    [Fact]
    public async Task WithoutPausesOrCountersNothingIsPutDownToThem()
    {
        var slow = Write("slow.csv", "created_utc_us,received_utc_us,latency_us,topic,transport,client",
            Delivery(1_000, 50_000, topic: 1), Delivery(2_000, 51_000, topic: 2), Delivery(900_000, 905_000, topic: 3));

        var (exit, output) = await RunAsync("--slow", slow);

        Assert.True(exit == 0, output);
        Assert.Contains("server GC pauses: not given", output);
        Assert.Contains("thread-pool queue: no counters given", output);
        Assert.Matches(@"unattributed\s+3\s+100\.0%", output);
        // The two deliveries 1 ms apart are one cluster, the largest, printed first with its time of day.
        Assert.Matches(@"top clusters[^\n]*\n\s+05:46:40\.001000 to 05:46:40\.051000\s+2 deliveries", output.ReplaceLineEndings("\n"));
    }

    private static string Delivery(long created, long received, int topic) => $"{T + created},{T + received},{received - created},{topic},sse,{topic}";

    private static string Pause(long start, long end, int generation) => $"{T + start},{T + end},{end - start},{generation},blocking,1000";

    private static string Sample(long at, int queue) => $"{T + at},100000,{queue},10";

    private string Write(string name, string header, params string[] rows)
    {
        var path = Path.Combine(_directory.FullName, name);
        File.WriteAllLines(path, [header, .. rows]);
        return path;
    }

    private static Task<(int ExitCode, string Output)> RunAsync(params string[] arguments)
    {
        var root = ChildProcess.FindRepositoryRoot(AppContext.BaseDirectory)
            ?? throw new InvalidOperationException($"No Laharsub.sln above {AppContext.BaseDirectory}: the tests run from the repository's build output.");
        return Command.RunAsync("python3", [Path.Combine(root, "loadtest", "scripts", "tail_attribution.py"), .. arguments], Bound,
            "install Debian's python3 to run tail_attribution.py");
    }
}
