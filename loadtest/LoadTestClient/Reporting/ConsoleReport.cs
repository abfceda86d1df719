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
        var stream = r.Transport != "longpoll";
        output.WriteLine($"   {r.Target} ({r.Format}): clients {r.Clients} ({r.Topics} topics x {r.ClientsPerTopic}, "
            + $"{(r.PublishersPerTopic == r.ClientsPerTopic ? "all" : r.PublishersPerTopic)} publishing, "
            + $"{r.TopicsPerClient} topic(s) per {(stream ? "stream" : "poll")}{(r.LongPollPercent > 0 ? $", {r.LongPollPercent}% long polling" : "")}{(r.Presence ? ", every client a presence member" : "")}), window {t.WindowSeconds:0.0} s after {r.WarmupSeconds:0} s warm-up");
        if (RunExecutor.ProductionText(r.Jwt, r.Origin, r.KeyedPublishes) is { } production)
        {
            output.WriteLine($"   production configuration: {production}");
        }
        output.WriteLine($"   publishes/s target {r.TargetPublishesPerSecond:0.0}, achieved {r.AchievedPublishesPerSecond:0.0} ({t.PublishesAccepted} accepted, {t.PublishesFailed} failed in the whole run)");
        output.WriteLine($"   deliveries expected {r.DeliveriesExpected}, received {r.DeliveriesReceived}, missing {r.DeliveriesMissing}; lost {t.Lost}, duplicated {t.Duplicates}, "
            + $"out of order {t.OutOfOrder}, gap notices {t.GapNotices} ({t.GapMessages} messages), resets {t.Resets}, epoch resets {t.EpochResets}");
        output.WriteLine((stream ? $"   streams opened {t.StreamsOpened} ({Math.Max(0, t.StreamsOpened - r.Clients)} reopened)" : $"   polls {t.Polls} ({t.EmptyPolls} empty)")
            + $"; HTTP errors {(t.HttpErrors.Count == 0 ? "none" : string.Join(", ", t.HttpErrors.Select(e => $"{e.Key}: {e.Value}")))}; transport errors {t.TransportErrors}");
        WriteLatency(output, "latency (ms) from creation ", r.Latency);
        WriteLatency(output, "latency (ms) from schedule ", r.LatencyFromSchedule);
        WriteLatency(output, "publish start lag (ms)     ", r.ScheduleLag);
        WriteLatency(output, r.PublishVia == "websocket" ? "publish on socket (ms)     " : "publish round trip (ms)    ", r.PublishRoundTrip);
        if (r.ServerProcesses.Count > 1)
        {
            foreach (var p in r.ServerProcesses)
            {
                output.WriteLine($"   {p.Name,-8} pid {p.Pid} (RSS): mean {p.RssMeanMiB:0.0} MiB, max {p.RssMaxMiB:0.0} MiB; CPU {p.CpuPercentOfOneCore:0.0}% of one core, {p.CpuMicrosecondsPerDelivery:0.0} µs per delivery");
            }
            if (r.Server is { } total)
            {
                output.WriteLine($"   all {r.ServerProcesses.Count} server-side processes: RSS {total.RssMeanMiB:0.0} MiB; CPU {total.CpuPercentOfOneCore:0.0}% of one core, {total.CpuMicrosecondsPerDelivery:0.0} µs per delivery");
            }
        }
        else if (r.Server is { } s)
        {
            var memory = s.Processes > 1 ? $"{s.Processes} processes, PSS summed" : "RSS";
            var perConnection = s.MemoryPerConnectionKiB is { } kib ? $" ({kib:0.0} KiB per connection over {s.IdleRssMiB:0.0} MiB idle)" : "";
            output.WriteLine($"   server pid {s.Pid} ({memory}): mean {s.RssMeanMiB:0.0} MiB, max {s.RssMaxMiB:0.0} MiB{perConnection}; CPU {s.CpuPercentOfOneCore:0.0}% of one core, {s.CpuMicrosecondsPerDelivery:0.0} µs per delivery");
        }
        output.WriteLine($"   client CPU {r.ClientCpuPercentOfOneCore:0.0}% of one core, {r.ClientCpuMicrosecondsPerDelivery:0.0} µs per delivery; "
            + $"GC paused it {t.GcPauseMs:0} ms in the window ({string.Join('/', t.GcCollections)} gen0/1/2 collections); "
            + $"network {r.BytesSentPerSecond / 1024:0.0} KiB/s sent, {r.BytesReceivedPerSecond / 1024:0.0} KiB/s received");
    }

    public static void WriteSummary(TextWriter output, IReadOnlyList<RunReport> reports)
    {
        output.WriteLine();
        // Names of runs of streams against a named target are longer (seed1-200t-websocket-laharsub).
        var width = Math.Max(26, reports.Max(r => r.Name.Length));
        output.WriteLine("run".PadRight(width) + "  clients  pub/s tgt/got   expected   received  lost dup ooo   mean    sd   p50   p90   p99  p99.9    max  sched p99  srv CPU%  srv µs/dlv  RSS MiB  cli CPU%  valid");
        foreach (var r in reports)
        {
            var l = r.Latency;
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{r.Name.PadRight(width)} {r.Clients,8} {r.TargetPublishesPerSecond,7:0} {r.AchievedPublishesPerSecond,6:0} {r.DeliveriesExpected,10} {r.DeliveriesReceived,10} "
                + $"{r.Totals.Lost,5} {r.Totals.Duplicates,3} {r.Totals.OutOfOrder,3} {l.MeanMs,6:0.00} {l.StdDevMs,5:0.00} {l.P50Ms,5:0.00} {l.P90Ms,5:0.00} "
                + $"{l.P99Ms,5:0.00} {l.P999Ms,6:0.00} {l.MaxMs,6:0.0} {r.LatencyFromSchedule.P99Ms,10:0.00} {r.Server?.CpuPercentOfOneCore ?? double.NaN,9:0.0} "
                + $"{r.Server?.CpuMicrosecondsPerDelivery ?? double.NaN,11:0.0} {r.Server?.RssMeanMiB ?? double.NaN,8:0} {r.ClientCpuPercentOfOneCore,9:0.0}  {(r.Valid ? "yes" : "NO")}"));
        }
        output.WriteLine("latency in ms from message creation to receipt; 'sched p99' from the intended send time (coordinated omission); CPU in % of one core;"
            + " 'srv' sums every server-side process (all instances and redis-server).");
        if (reports.Any(r => r.ServerProcesses.Count > 1))
        {
            output.WriteLine();
            output.WriteLine("run".PadRight(width) + " process    CPU%  µs/dlv  RSS MiB");
            foreach (var r in reports.Where(r => r.ServerProcesses.Count > 1))
            {
                foreach (var p in r.ServerProcesses)
                {
                    output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"{r.Name.PadRight(width)} {p.Name,-9} {p.CpuPercentOfOneCore,6:0.0} {p.CpuMicrosecondsPerDelivery,7:0.0} {p.RssMeanMiB,8:0}"));
                }
            }
        }
    }

    /// <summary>
    /// The targets side by side for each shape that ran against all of them, with the ratio of each
    /// target to the last one (laharsub / nchan for --compare laharsub,nchan: above 1, Laharsub is slower or costlier).
    /// </summary>
    public static void WriteComparison(TextWriter output, IReadOnlyList<RunReport> reports, IReadOnlyList<string> targets)
    {
        var reference = targets[^1];
        output.WriteLine();
        output.WriteLine($"== side by side (ratio = target / {reference}; above 1 means {reference} was faster or cheaper)");
        var header = new System.Text.StringBuilder($"{"run",-14} {"metric",-32}");
        foreach (var target in targets)
        {
            header.Append(CultureInfo.InvariantCulture, $" {target,12}");
        }
        foreach (var target in targets.Take(targets.Count - 1))
        {
            header.Append(CultureInfo.InvariantCulture, $" {target + "/" + reference,16}");
        }
        output.WriteLine(header);
        foreach (var shape in reports.GroupBy(ShapeName))
        {
            var byTarget = targets.Select(t => shape.LastOrDefault(r => r.Target == t)).ToList();
            if (byTarget.Any(r => r is null))
            {
                continue;
            }
            var runs = byTarget.Select(r => r!).ToList();
            var first = true;
            foreach (var (metric, value) in ComparedMetrics)
            {
                var line = new System.Text.StringBuilder(string.Create(CultureInfo.InvariantCulture, $"{(first ? shape.Key : ""),-14} {metric,-32}"));
                first = false;
                var values = runs.Select(value).ToList();
                foreach (var v in values)
                {
                    line.Append(CultureInfo.InvariantCulture, $" {v,12:0.000}");
                }
                foreach (var v in values.Take(values.Count - 1))
                {
                    var ratio = values[^1] is > 0 and var r && !double.IsNaN(v) ? v / r : double.NaN;
                    line.Append(CultureInfo.InvariantCulture, $" {ratio,16:0.00}");
                }
                output.WriteLine(line);
            }
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{"",-14} {"received / expected, valid",-32}")
                + string.Concat(runs.Select(r => $" {$"{r.DeliveriesReceived}/{r.DeliveriesExpected}{(r.Valid ? "" : " INVALID")}",12}")));
        }
        output.WriteLine("latency from message creation to receipt; server CPU summed over its processes; memory: RSS of one process, PSS summed over nginx's processes.");
    }

    /// <summary>The run's shape without its target: what --compare runs against each target.</summary>
    public static string ShapeName(RunReport r) => $"{r.Configuration}-{r.Topics}t";

    private static readonly (string Metric, Func<RunReport, double> Value)[] ComparedMetrics =
    [
        ("latency mean (ms)", r => r.Latency.MeanMs),
        ("latency p50 (ms)", r => r.Latency.P50Ms),
        ("latency p99 (ms)", r => r.Latency.P99Ms),
        ("latency p99.9 (ms)", r => r.Latency.P999Ms),
        ("p99 from schedule (ms)", r => r.LatencyFromSchedule.P99Ms),
        ("server CPU per delivery (µs)", r => r.Server?.CpuMicrosecondsPerDelivery ?? double.NaN),
        ("server CPU (% of one core)", r => r.Server?.CpuPercentOfOneCore ?? double.NaN),
        ("server memory mean (MiB)", r => r.Server?.RssMeanMiB ?? double.NaN),
        ("memory per connection (KiB)", r => r.Server?.MemoryPerConnectionKiB ?? double.NaN),
        ("client CPU per delivery (µs)", r => r.ClientCpuMicrosecondsPerDelivery),
    ];

    private static void WriteLatency(TextWriter output, string label, LatencySummary s) =>
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"   {label} n {s.Count,8}  mean {s.MeanMs:0.000}  sd {s.StdDevMs:0.000}  min {s.MinMs:0.000}  p50 {s.P50Ms:0.000}  p90 {s.P90Ms:0.000}  p99 {s.P99Ms:0.000}  p99.9 {s.P999Ms:0.000}  max {s.MaxMs:0.000}"));
}
