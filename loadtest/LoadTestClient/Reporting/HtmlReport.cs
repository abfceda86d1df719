using System.Globalization;
using System.Net;
using System.Text;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Reporting;

/// <summary>
/// A self-contained HTML page (inline SVG, no script, nothing fetched) with charts that mirror the
/// original article's figures: latency mean and standard deviation against clients per
/// configuration, the latency distribution of each run, and server memory against clients.
/// </summary>
internal static class HtmlReport
{
    private const int Width = 640;
    private const int Height = 320;
    private const int Left = 64;
    private const int Right = 150;
    private const int Top = 20;
    private const int Bottom = 44;
    private static readonly string[] Colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

    public static string Render(IReadOnlyList<RunReport> reports)
    {
        var html = new StringBuilder();
        html.Append("""
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Laharsub load test</title>
            <style>body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;font-size:13px}
            td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}th{background:#f4f4f4}td:first-child{text-align:left}
            .bad{color:#b00;font-weight:bold}svg{display:block;margin:1em 0}text{font-size:11px}</style></head><body>
            <h1>Laharsub load test</h1>
            """);
        var first = reports[0];
        var production = RunExecutor.ProductionText(first.Jwt, first.Origin, first.KeyedPublishes) is { } text ? "; production configuration: " + Encode(text) : "";
        html.Append(CultureInfo.InvariantCulture, $"<p>{Encode(first.Command)}<br>Started {first.StartedAt:u}; {first.WarmupSeconds:0} s warm-up, {first.DurationSeconds:0} s measured per run; "
            + $"{first.MessageSize}-byte messages, over {first.Transport} ({first.Format}){production}. Latency is from the creation of a message to its receipt by a subscriber "
            + $"(the original's metric); \"from schedule\" counts from the time the publisher was meant to send it.</p>");
        AppendTable(html, reports);

        var byConfiguration = reports.GroupBy(r => r.Configuration).ToList();
        html.Append("<h2>Figure 1. Average latency</h2>");
        html.Append(LineChart(byConfiguration.Select(g => (g.Key, Points(g, r => r.Latency.MeanMs))), "clients", "latency mean (ms)"));
        html.Append("<h2>Figure 2. Standard deviation of latency</h2>");
        html.Append(LineChart(byConfiguration.Select(g => (g.Key, Points(g, r => r.Latency.StdDevMs))), "clients", "latency standard deviation (ms)"));
        html.Append("<h2>Figure 3. 99th percentile latency, from creation and from schedule</h2>");
        html.Append(LineChart(byConfiguration.SelectMany(g => new[]
        {
            (g.Key + " p99", Points(g, r => r.Latency.P99Ms)),
            (g.Key + " p99 sched.", Points(g, r => r.LatencyFromSchedule.P99Ms)),
        }), "clients", "latency p99 (ms)"));
        html.Append("<h2>Figure 4. Server memory (RSS, mean over the measured window)</h2>");
        html.Append(LineChart(byConfiguration.Select(g => (g.Key, Points(g.Where(r => r.Server is not null), r => r.Server!.RssMeanMiB))), "clients", "server RSS (MiB)"));
        html.Append("<h2>Figure 5. Server and client CPU per delivery</h2>");
        html.Append(LineChart(byConfiguration.SelectMany(g => new[]
        {
            (g.Key + " server", Points(g.Where(r => r.Server is not null), r => r.Server!.CpuMicrosecondsPerDelivery)),
            (g.Key + " client", Points(g, r => r.ClientCpuMicrosecondsPerDelivery)),
        }), "clients", "CPU µs per delivery"));
        html.Append("<h2>Latency distribution of each run</h2>");
        foreach (var report in reports)
        {
            html.Append(CultureInfo.InvariantCulture, $"<h3>{Encode(report.Name)} ({report.Clients} clients)</h3>");
            html.Append(Distribution(report));
        }
        html.Append("</body></html>\n");
        return html.ToString();
    }

    private static void AppendTable(StringBuilder html, IReadOnlyList<RunReport> reports)
    {
        html.Append("<table><tr><th>run</th><th>clients</th><th>publishes/s target</th><th>achieved</th><th>deliveries expected</th><th>received</th>"
            + "<th>lost</th><th>dup.</th><th>mean ms</th><th>sd ms</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th><th>p99 from schedule</th>"
            + "<th>server CPU %</th><th>server µs/delivery</th><th>server RSS MiB</th><th>client CPU %</th><th>valid</th></tr>");
        foreach (var r in reports)
        {
            var l = r.Latency;
            html.Append(CultureInfo.InvariantCulture,
                $"<tr><td>{Encode(r.Name)}</td><td>{r.Clients}</td><td>{r.TargetPublishesPerSecond:0}</td><td>{r.AchievedPublishesPerSecond:0}</td>"
                + $"<td>{r.DeliveriesExpected}</td><td>{r.DeliveriesReceived}</td><td>{r.Totals.Lost}</td><td>{r.Totals.Duplicates}</td>"
                + $"<td>{l.MeanMs:0.000}</td><td>{l.StdDevMs:0.000}</td><td>{l.P50Ms:0.000}</td><td>{l.P90Ms:0.000}</td><td>{l.P99Ms:0.000}</td>"
                + $"<td>{l.P999Ms:0.000}</td><td>{l.MaxMs:0.0}</td><td>{r.LatencyFromSchedule.P99Ms:0.000}</td>"
                + $"<td>{r.Server?.CpuPercentOfOneCore:0.0}</td><td>{r.Server?.CpuMicrosecondsPerDelivery:0.0}</td><td>{r.Server?.RssMeanMiB:0}</td>"
                + $"<td>{r.ClientCpuPercentOfOneCore:0.0}</td><td{(r.Valid ? ">yes" : " class=\"bad\" title=\"" + Encode(r.InvalidReason ?? "") + "\">INVALID")}</td></tr>");
        }
        html.Append("</table>");
    }

    private static List<(double X, double Y)> Points(IEnumerable<RunReport> runs, Func<RunReport, double> y) =>
        runs.OrderBy(r => r.Clients).Select(r => ((double)r.Clients, y(r))).ToList();

    private static string LineChart(IEnumerable<(string Name, List<(double X, double Y)> Points)> seriesList, string xLabel, string yLabel)
    {
        var series = seriesList.Where(s => s.Points.Count > 0).ToList();
        if (series.Count == 0)
        {
            return "<p>(no data)</p>";
        }
        var maxX = NiceCeiling(series.SelectMany(s => s.Points).Max(p => p.X));
        var maxY = NiceCeiling(series.SelectMany(s => s.Points).Max(p => p.Y));
        var svg = new StringBuilder();
        AppendAxes(svg, maxX, maxY, xLabel, yLabel);
        for (var i = 0; i < series.Count; i++)
        {
            var color = Colors[i % Colors.Length];
            var points = string.Join(' ', series[i].Points.Select(p => F(X(p.X, maxX)) + "," + F(Y(p.Y, maxY))));
            svg.Append(CultureInfo.InvariantCulture, $"<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{points}\"/>");
            foreach (var (x, y) in series[i].Points)
            {
                svg.Append(CultureInfo.InvariantCulture, $"<circle cx=\"{F(X(x, maxX))}\" cy=\"{F(Y(y, maxY))}\" r=\"3\" fill=\"{color}\"><title>{x:0} clients: {y:0.###}</title></circle>");
            }
            var legendY = Top + 14 + i * 16;
            svg.Append(CultureInfo.InvariantCulture, $"<rect x=\"{Width - Right + 12}\" y=\"{legendY - 9}\" width=\"10\" height=\"10\" fill=\"{color}\"/>"
                + $"<text x=\"{Width - Right + 26}\" y=\"{legendY}\">{Encode(series[i].Name)}</text>");
        }
        return Wrap(svg);
    }

    private static string Distribution(RunReport report)
    {
        var histogram = LatencyHistogram.FromData(report.Totals.Latency);
        if (histogram.TotalCount == 0)
        {
            return "<p>(nothing measured)</p>";
        }
        // Up to the 99.9th percentile in 60 bars; the tail beyond is summarised in the caption.
        var limit = NiceCeiling(Math.Max(histogram.ValueAtPercentile(99.9), 1));
        const int bars = 60;
        var counts = new long[bars];
        foreach (var (low, high, count) in histogram.Buckets())
        {
            var middle = (low + high) / 2.0;
            if (middle <= limit)
            {
                counts[Math.Min(bars - 1, (int)(middle / limit * bars))] += count;
            }
        }
        var maxCount = NiceCeiling(counts.Max());
        var svg = new StringBuilder();
        AppendAxes(svg, limit / 1000.0, maxCount, "latency (ms)", "deliveries");
        var barWidth = (Width - Left - Right) / (double)bars;
        for (var i = 0; i < bars; i++)
        {
            if (counts[i] == 0)
            {
                continue;
            }
            var top = Y(counts[i], maxCount);
            svg.Append(CultureInfo.InvariantCulture, $"<rect x=\"{F(Left + i * barWidth)}\" y=\"{F(top)}\" width=\"{F(barWidth - 1)}\" height=\"{F(Height - Bottom - top)}\" fill=\"{Colors[0]}\">"
                + $"<title>{i * limit / bars / 1000.0:0.###}-{(i + 1) * limit / bars / 1000.0:0.###} ms: {counts[i]}</title></rect>");
        }
        var l = report.Latency;
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Width - Right + 12}\" y=\"{Top + 14}\">n {l.Count}</text><text x=\"{Width - Right + 12}\" y=\"{Top + 30}\">mean {l.MeanMs:0.###} ms</text>"
            + $"<text x=\"{Width - Right + 12}\" y=\"{Top + 46}\">p99 {l.P99Ms:0.###} ms</text><text x=\"{Width - Right + 12}\" y=\"{Top + 62}\">max {l.MaxMs:0.###} ms</text>");
        return Wrap(svg);
    }

    private static void AppendAxes(StringBuilder svg, double maxX, double maxY, string xLabel, string yLabel)
    {
        svg.Append(CultureInfo.InvariantCulture, $"<line x1=\"{Left}\" y1=\"{Height - Bottom}\" x2=\"{Width - Right}\" y2=\"{Height - Bottom}\" stroke=\"#000\"/>"
            + $"<line x1=\"{Left}\" y1=\"{Top}\" x2=\"{Left}\" y2=\"{Height - Bottom}\" stroke=\"#000\"/>");
        for (var i = 0; i <= 5; i++)
        {
            var x = Left + (Width - Left - Right) * i / 5.0;
            var y = Height - Bottom - (Height - Top - Bottom) * i / 5.0;
            svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{F(x)}\" y=\"{Height - Bottom + 14}\" text-anchor=\"middle\">{maxX * i / 5:0.###}</text>"
                + $"<text x=\"{Left - 4}\" y=\"{F(y + 4)}\" text-anchor=\"end\">{maxY * i / 5:0.###}</text>"
                + $"<line x1=\"{Left}\" y1=\"{F(y)}\" x2=\"{Width - Right}\" y2=\"{F(y)}\" stroke=\"#eee\"/>");
        }
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{(Left + Width - Right) / 2}\" y=\"{Height - 8}\" text-anchor=\"middle\">{Encode(xLabel)}</text>"
            + $"<text transform=\"translate(14,{(Top + Height - Bottom) / 2}) rotate(-90)\" text-anchor=\"middle\">{Encode(yLabel)}</text>");
    }

    private static string Wrap(StringBuilder body) =>
        $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{Height}\" viewBox=\"0 0 {Width} {Height}\">{body}</svg>";

    private static double X(double x, double maxX) => Left + x / maxX * (Width - Left - Right);

    private static double Y(double y, double maxY) => Height - Bottom - y / maxY * (Height - Top - Bottom);

    /// <summary>The smallest of 1, 2, 2.5 or 5 times a power of ten at or above the value, for round axis ticks.</summary>
    private static double NiceCeiling(double value)
    {
        if (value <= 0 || double.IsNaN(value))
        {
            return 1;
        }
        var power = Math.Pow(10, Math.Floor(Math.Log10(value)));
        foreach (var step in new[] { 1, 2, 2.5, 5, 10 })
        {
            if (step * power >= value)
            {
                return step * power;
            }
        }
        return 10 * power;
    }

    private static string F(double value) => value.ToString("0.#", CultureInfo.InvariantCulture);

    private static string Encode(string text) => WebUtility.HtmlEncode(text);
}
