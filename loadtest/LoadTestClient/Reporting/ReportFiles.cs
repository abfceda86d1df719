using System.Globalization;
using System.Text;
using System.Text.Json;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Reporting;

/// <summary>Writes the results of a command to a directory: per run JSON and a CSV latency distribution, a summary CSV and the HTML report.</summary>
internal static class ReportFiles
{
    public static void Write(string directory, IReadOnlyList<RunReport> reports)
    {
        Directory.CreateDirectory(directory);
        foreach (var report in reports)
        {
            File.WriteAllText(Path.Combine(directory, report.Name + ".json"), JsonSerializer.Serialize(report, LoadJson.Indented));
            File.WriteAllText(Path.Combine(directory, report.Name + ".csv"), DistributionCsv(report));
        }
        File.WriteAllText(Path.Combine(directory, "summary.csv"), SummaryCsv(reports));
        File.WriteAllText(Path.Combine(directory, "report.html"), HtmlReport.Render(reports));
    }

    /// <summary>The run's latency distribution: one row per non-empty histogram bucket, with the cumulative share.</summary>
    public static string DistributionCsv(RunReport report)
    {
        var csv = new StringBuilder("latency_from_us,latency_to_us,count,cumulative_fraction\n");
        var histogram = LatencyHistogram.FromData(report.Totals.Latency);
        long seen = 0;
        foreach (var (low, high, count) in histogram.Buckets())
        {
            seen += count;
            csv.Append(CultureInfo.InvariantCulture, $"{low},{high},{count},{(double)seen / histogram.TotalCount:0.######}\n");
        }
        return csv.ToString();
    }

    public static string SummaryCsv(IReadOnlyList<RunReport> reports)
    {
        var csv = new StringBuilder(
            "run,configuration,topics,clients_per_topic,topics_per_client,clients,interval_s,message_bytes,format,warmup_s,duration_s,processes,"
            + "target_pub_per_s,achieved_pub_per_s,deliveries_expected,deliveries_received,missing,lost,duplicated,out_of_order,gap_notices,http_errors,transport_errors,"
            + "latency_mean_ms,latency_sd_ms,latency_min_ms,latency_p50_ms,latency_p90_ms,latency_p99_ms,latency_p999_ms,latency_max_ms,"
            + "sched_latency_mean_ms,sched_latency_p99_ms,sched_latency_max_ms,publish_lag_p99_ms,server_rss_mean_mib,server_rss_max_mib,server_cpu_pct,"
            + "server_cpu_us_per_delivery,client_cpu_pct,client_cpu_us_per_delivery,client_gc_pause_ms,sent_bytes_per_s,received_bytes_per_s,valid,load_average,"
            + "target,publishers_per_topic,resets,epoch_resets,backend,instances,server_processes,transport,publish_via,streams_opened,server_idle_rss_mib,server_kib_per_connection,jwt,origin,keyed_publishes\n");
        foreach (var r in reports)
        {
            var l = r.Latency;
            var s = r.LatencyFromSchedule;
            csv.Append(CultureInfo.InvariantCulture,
                $"{r.Name},{r.Configuration},{r.Topics},{r.ClientsPerTopic},{r.TopicsPerClient},{r.Clients},{r.IntervalSeconds},{r.MessageSize},{r.Format},"
                + $"{r.WarmupSeconds},{r.DurationSeconds},{r.Processes},{r.TargetPublishesPerSecond:0.###},{r.AchievedPublishesPerSecond:0.###},"
                + $"{r.DeliveriesExpected},{r.DeliveriesReceived},{r.DeliveriesMissing},{r.Totals.Lost},{r.Totals.Duplicates},{r.Totals.OutOfOrder},"
                + $"{r.Totals.GapNotices},{r.Totals.HttpErrors.Values.Sum()},{r.Totals.TransportErrors},"
                + $"{l.MeanMs},{l.StdDevMs},{l.MinMs},{l.P50Ms},{l.P90Ms},{l.P99Ms},{l.P999Ms},{l.MaxMs},{s.MeanMs},{s.P99Ms},{s.MaxMs},{r.ScheduleLag.P99Ms},"
                + $"{r.Server?.RssMeanMiB:0.0},{r.Server?.RssMaxMiB:0.0},{r.Server?.CpuPercentOfOneCore:0.0},{r.Server?.CpuMicrosecondsPerDelivery:0.0},"
                + $"{r.ClientCpuPercentOfOneCore:0.0},{r.ClientCpuMicrosecondsPerDelivery:0.0},{r.Totals.GcPauseMs:0},{r.BytesSentPerSecond:0},{r.BytesReceivedPerSecond:0},"
                + $"{(r.Valid ? "true" : "false")},\"{r.LoadAverage}\",{r.Target},{r.PublishersPerTopic},{r.Totals.Resets},{r.Totals.EpochResets},"
                + $"{r.Backend},{r.Instances},\"{ProcessesColumn(r)}\",{r.Transport},{r.PublishVia},{r.Totals.StreamsOpened},"
                + $"{r.Server?.IdleRssMiB:0.0},{r.Server?.MemoryPerConnectionKiB:0.00},{(r.Jwt ? "true" : "false")},{r.Origin},{(r.KeyedPublishes ? "true" : "false")}\n");
        }
        return csv.ToString();
    }

    /// <summary>Each server-side process as name pid cpu% µs/delivery RSS-MiB, separated by semicolons.</summary>
    private static string ProcessesColumn(RunReport r) => string.Join("; ", r.ServerProcesses.Select(p => string.Create(CultureInfo.InvariantCulture,
        $"{p.Name} pid {p.Pid} cpu {p.CpuPercentOfOneCore:0.0}% {p.CpuMicrosecondsPerDelivery:0.0} us/dlv rss {p.RssMeanMiB:0} MiB")));
}
