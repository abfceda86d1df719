using System.Text.Json;
using Laharsub.LoadTestClient;

namespace Laharsub.LoadTest.Tests;

/// <summary>--servers: the tool starts a private Redis and several server processes on it, and spreads the clients over them.</summary>
public sealed class ScaleOutRunTests : IDisposable
{
    // Starting Redis and two servers (Release build) on a busy machine takes seconds before the run's own few.
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(150);

    private readonly string _out = Directory.CreateTempSubdirectory("laharsub-loadtest-scaleout-").FullName;

    public void Dispose() => Directory.Delete(_out, recursive: true);

    [Fact]
    public async Task TwoServersOnOneRedisDeliverEveryMessageExactlyOnceAcrossInstancesAndEachProcessIsSampled()
    {
        using var output = new StringWriter();

        // 3 clients per topic on 2 instances: every topic has subscribers on both, whichever instance its publisher uses.
        var exit = await LoadTestCommand.RunAsync(
            ["--servers", "2", "--no-build", "--topics", "4", "--clients-per-topic", "3", "--interval", "0.25", "--warmup", "1", "--duration", "3",
             "--max-schedule-lag", "1000", "--out", _out],
            output, TextWriter.Synchronized(output), CancellationToken.None).WaitAsync(Timeout);

        var text = output.ToString();
        Assert.True(exit == 0, $"exit code {exit}:\n{text}");
        var run = JsonDocument.Parse(File.ReadAllText(Path.Combine(_out, "custom-4t-redis2.json"))).RootElement;
        Assert.Equal(("redis", 2, 12), (run.GetProperty("backend").GetString(), run.GetProperty("instances").GetInt32(), run.GetProperty("clients").GetInt32()));
        var expected = run.GetProperty("deliveriesExpected").GetInt64();
        // 12 clients publishing 4 times a second for 3 s, each message to its topic's 3 subscribers.
        Assert.InRange(expected, 12 * 4 * 3 * 3 * 0.8, 12 * 4 * 3 * 3 * 1.2);
        Assert.Equal(expected, run.GetProperty("deliveriesReceived").GetInt64());
        var totals = run.GetProperty("totals");
        Assert.Equal((0L, 0L, 0L), (totals.GetProperty("lost").GetInt64(), totals.GetProperty("duplicates").GetInt64(), totals.GetProperty("outOfOrder").GetInt64()));
        Assert.Empty(totals.GetProperty("httpErrors").EnumerateObject());
        // Both servers and redis-server, each sampled on its own, and their sum.
        var processes = run.GetProperty("serverProcesses").EnumerateArray().ToList();
        Assert.Equal(["server1", "server2", "redis"], processes.Select(p => p.GetProperty("name").GetString()));
        Assert.Equal(3, processes.Select(p => p.GetProperty("pid").GetInt32()).Distinct().Count());
        Assert.All(processes, p => Assert.True(p.GetProperty("cpuMicrosecondsPerDelivery").GetDouble() > 0 && p.GetProperty("rssMeanMiB").GetDouble() > 0, p.ToString()));
        Assert.Equal(processes.Sum(p => p.GetProperty("cpuMicrosecondsPerDelivery").GetDouble()),
            run.GetProperty("server").GetProperty("cpuMicrosecondsPerDelivery").GetDouble(), 3);
        Assert.Contains("--Laharsub:Redis:Configuration=127.0.0.1:", run.GetProperty("serverCommand").GetString());
        Assert.Contains("--Laharsub:Limits:MaxWaitingPollsPerClient=0", run.GetProperty("serverCommand").GetString());
        Assert.Contains("server2", File.ReadAllText(Path.Combine(_out, "summary.csv")));
        Assert.Contains("redis CPU", text);
    }
}
