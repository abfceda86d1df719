using System.Globalization;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Reporting;

/// <summary>The text a person reads at the end of each run and of the whole command.</summary>
internal static class ConsoleReport
{
    public static void WriteRun(TextWriter output, RunReport r)
    {
        var t = r.Totals;
        output.WriteLine();
        output.WriteLine($"-- {r.Name}: {(r.Valid ? "VALID" : "INVALID: " + r.InvalidReason)}{(t.Interrupted ? " (interrupted)" : "")}");
        output.WriteLine($"   {r.Target}: clients {r.Clients} ({r.Topics} topics x {r.ClientsPerTopic}, {(r.PublishersPerTopic == r.ClientsPerTopic ? "all" : r.PublishersPerTopic)} publishing, "
            + $"{r.TopicsPerClient} topic(s) per poll), window {t.WindowSeconds:0.0} s after {r.WarmupSeconds:0} s warm-up");
        output.WriteLine($"   publishes/s target {r.TargetPublishesPerSecond:0.0}, achieved {r.AchievedPublishesPerSecond:0.0} ({t.PublishesAccepted} accepted, {t.PublishesFailed} failed in the whole run)");
        output.WriteLine($"   deliveries expected {r.DeliveriesExpected}, received {r.DeliveriesReceived}, missing {r.DeliveriesMissing}; lost {t.Lost}, duplicated {t.Duplicates}, "
            + $"out of order {t.OutOfOrder}, gap notices {t.GapNotices} ({t.GapMessages} messages), resets {t.Resets}, epoch resets {t.EpochResets}");
        output.WriteLine($"   polls {t.Polls} ({t.EmptyPolls} empty); HTTP errors {(t.HttpErrors.Count == 0 ? "none" : string.Join(", ", t.HttpErrors.Select(e => $"{e.Key}: {e.Value}")))}; transport errors {t.TransportErrors}");
        WriteLatency(output, "latency (ms) from creation ", r.Latency);
        WriteLatency(output, "latency (ms) from schedule ", r.LatencyFromSchedule);
        WriteLatency(output, "publish start lag (ms)     ", r.ScheduleLag);
        WriteLatency(output, "publish round trip (ms)    ", r.PublishRoundTrip);
        if (r.Server is { } s)
        {
            var memory = s.Processes > 1 ? $"{s.Processes} processes, PSS summed" : "RSS";
            output.WriteLine($"   server pid {s.Pid} ({memory}): mean {s.RssMeanMiB:0.0} MiB, max {s.RssMaxMiB:0.0} MiB; CPU {s.CpuPercentOfOneCore:0.0}% of one core, {s.CpuMicrosecondsPerDelivery:0.0} µs per delivery");
        }
        output.WriteLine($"   client CPU {r.ClientCpuPercentOfOneCore:0.0}% of one core, {r.ClientCpuMicrosecondsPerDelivery:0.0} µs per delivery; "
            + $"GC paused it {t.GcPauseMs:0} ms in the window ({string.Join('/', t.GcCollections)} gen0/1/2 collections); "
            + $"network {r.BytesSentPerSecond / 1024:0.0} KiB/s sent, {r.BytesReceivedPerSecond / 1024:0.0} KiB/s received");
    }

    public static void WriteSummary(TextWriter output, IReadOnlyList<RunReport> reports)
    {
        output.WriteLine();
        output.WriteLine("run                     clients  pub/s tgt/got   expected   received  lost dup ooo   mean    sd   p50   p90   p99  p99.9    max  sched p99  srv CPU%  srv µs/dlv  RSS MiB  cli CPU%  valid");
        foreach (var r in reports)
        {
            var l = r.Latency;
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{r.Name,-22} {r.Clients,8} {r.TargetPublishesPerSecond,7:0} {r.AchievedPublishesPerSecond,6:0} {r.DeliveriesExpected,10} {r.DeliveriesReceived,10} "
                + $"{r.Totals.Lost,5} {r.Totals.Duplicates,3} {r.Totals.OutOfOrder,3} {l.MeanMs,6:0.00} {l.StdDevMs,5:0.00} {l.P50Ms,5:0.00} {l.P90Ms,5:0.00} "
                + $"{l.P99Ms,5:0.00} {l.P999Ms,6:0.00} {l.MaxMs,6:0.0} {r.LatencyFromSchedule.P99Ms,10:0.00} {r.Server?.CpuPercentOfOneCore ?? double.NaN,9:0.0} "
                + $"{r.Server?.CpuMicrosecondsPerDelivery ?? double.NaN,11:0.0} {r.Server?.RssMeanMiB ?? double.NaN,8:0} {r.ClientCpuPercentOfOneCore,9:0.0}  {(r.Valid ? "yes" : "NO")}"));
        }
        output.WriteLine("latency in ms from message creation to receipt; 'sched p99' from the intended send time (coordinated omission); CPU in % of one core.");
    }

    private static void WriteLatency(TextWriter output, string label, LatencySummary s) =>
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"   {label} n {s.Count,8}  mean {s.MeanMs:0.000}  sd {s.StdDevMs:0.000}  min {s.MinMs:0.000}  p50 {s.P50Ms:0.000}  p90 {s.P90Ms:0.000}  p99 {s.P99Ms:0.000}  p99.9 {s.P999Ms:0.000}  max {s.MaxMs:0.000}"));
}
