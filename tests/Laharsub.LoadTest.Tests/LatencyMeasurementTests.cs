using Laharsub.LoadTestClient.Measurement;
using Laharsub.Testing;

namespace Laharsub.LoadTest.Tests;

/// <summary>The latency the tool reports is the latency that happened: a delay added on the wire shows up in full.</summary>
public sealed class LatencyMeasurementTests
{
    private static readonly TimeSpan Delay = TimeSpan.FromMilliseconds(100);

    [Fact]
    public async Task ADelayBetweenPublishAndDeliveryShowsUpInTheReportedLatency()
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(LoadRuns.Timeout);
        var direct = await LoadRuns.RunAsync(LoadRuns.Plan(server.BaseAddress, await LoadRuns.CreateTopicsAsync(server.BaseAddress, 3)));

        await using var proxy = new DelayingProxy(server.BaseAddress, Delay);
        var delayed = await LoadRuns.RunAsync(LoadRuns.Plan(proxy.BaseAddress, await LoadRuns.CreateTopicsAsync(server.BaseAddress, 3)));

        var before = LatencySummary.From(direct.Latency);
        var after = LatencySummary.From(delayed.Latency);
        Assert.True(after.Count > 0 && before.Count > 0, $"measured {before.Count} direct and {after.Count} delayed deliveries");
        Assert.True(after.MinMs >= Delay.TotalMilliseconds, $"every delayed delivery takes at least {Delay.TotalMilliseconds} ms, but the fastest took {after.MinMs} ms");
        // Bounds that hold however slow the machine is: without the proxy some delivery beats the delay,
        // with it none does. (Comparing the two means would compare two timed runs.)
        Assert.True(before.MinMs < Delay.TotalMilliseconds, $"without the proxy the fastest delivery took {before.MinMs} ms");
        Assert.True(LatencySummary.From(delayed.LatencyFromSchedule).MinMs >= after.MinMs, "latency from the schedule is never below latency from creation");
        Assert.Equal(delayed.PublishesAccepted * 2, delayed.DeliveriesMeasured);
    }
}
