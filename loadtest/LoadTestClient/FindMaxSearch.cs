using System.Globalization;
using Laharsub.LoadTestClient.Reporting;

namespace Laharsub.LoadTestClient;

/// <summary>
/// --find-max: runs each shape at its own publish rate, then at that rate times the factor, and so
/// on, one run per step and target (alternating targets, so they share the same minutes of the
/// machine), until a target no longer holds the rate: p99 from schedule above 50 ms, a delivery
/// missing or late at the end, a publish refused, or fewer publishes than scheduled. The highest
/// rate each target held is its sustained deliveries per second. Bounded: at most
/// <see cref="LoadTestOptions.FindMaxSteps"/> runs per target and shape.
/// </summary>
internal sealed class FindMaxSearch(LoadTestOptions options, RunExecutor executor, TextWriter output, TextWriter error)
{
    public const double MaxP99Milliseconds = 50;

    /// <summary>Runs the search; false when a step could not run at all.</summary>
    public async Task<bool> RunAsync(List<RunReport> reports, CancellationToken stop)
    {
        var ok = true;
        var shapes = options.Runs.GroupBy(r => (r.Configuration, r.Topics)).Select(g => g.First()).ToList();
        var perStep = options.Warmup + options.Duration + TimeSpan.FromSeconds(15);
        output.WriteLine($"find-max: {shapes.Count} shape(s) x {options.Targets.Count} target(s), at most {options.FindMaxSteps} steps each, "
            + $"rate x{options.FindMaxFactor.ToString(CultureInfo.InvariantCulture)} per step; at most about "
            + $"{(perStep * shapes.Count * options.Targets.Count * options.FindMaxSteps).TotalMinutes:0} minutes");
        foreach (var shape in shapes)
        {
            var searching = options.Targets.ToList();
            for (var step = 0; step < options.FindMaxSteps && searching.Count > 0 && !stop.IsCancellationRequested; step++)
            {
                var interval = TimeSpan.FromTicks((long)(shape.Interval.Ticks / Math.Pow(options.FindMaxFactor, step)));
                if (interval < TimeSpan.FromMilliseconds(1))
                {
                    output.WriteLine($"find-max: step {step} would publish more often than every 1 ms per client; stopping the search of {shape.Configuration}-{shape.Topics}t here.");
                    break;
                }
                foreach (var target in searching.ToList())
                {
                    if (stop.IsCancellationRequested)
                    {
                        break;
                    }
                    var spec = shape with { Configuration = $"{shape.Configuration}-max{step}", Interval = interval, Target = target, NamesTarget = true };
                    RunReport report;
                    try
                    {
                        report = await executor.RunAsync(spec, stop).ConfigureAwait(false);
                    }
                    catch (Exception exception) when (exception is not UsageException and not OperationCanceledException)
                    {
                        error.WriteLine($"error: find-max step {step} ({spec.Name}) failed: {exception.Message}");
                        searching.Remove(target);
                        ok = false;
                        continue;
                    }
                    catch (OperationCanceledException) when (stop.IsCancellationRequested)
                    {
                        break;
                    }
                    var (holds, verdict) = Judge(report);
                    report = report with { Search = new FindMaxStep($"{shape.Configuration}-{shape.Topics}t", step, holds, verdict) };
                    reports.Add(report);
                    ConsoleReport.WriteRun(output, report);
                    output.WriteLine($"   find-max step {step}: {RunSpec.TargetName(target)} {(holds ? "holds" : "does not hold")} "
                        + $"{report.TargetPublishesPerSecond:0} publishes/s ({report.DeliveriesPerSecond:0} deliveries/s): {verdict}");
                    if (!holds)
                    {
                        searching.Remove(target);
                    }
                }
            }
        }
        return ok;
    }

    /// <summary>Whether a step's run held its rate, and why not.</summary>
    public static (bool Holds, string Verdict) Judge(RunReport r)
    {
        var t = r.Totals;
        if (!r.Valid)
        {
            return (false, "limited by the generator, not the server: " + r.InvalidReason);
        }
        if (r.DeliveriesMissing > 0 || t.Lost > 0 || t.Duplicates > 0 || t.OutOfOrder > 0)
        {
            return (false, $"deliveries fell behind: {r.DeliveriesMissing} of {r.DeliveriesExpected} missing at the end, {t.Lost} lost, {t.Duplicates} duplicated, {t.OutOfOrder} out of order");
        }
        if (t.PublishesFailed > 0 || t.TransportErrors > 0 || t.HttpErrors.Count > 0)
        {
            return (false, $"errors: {t.PublishesFailed} publishes failed, {t.TransportErrors} transport errors, HTTP errors {string.Join(", ", t.HttpErrors.Select(e => $"{e.Key}: {e.Value}"))}");
        }
        if (r.AchievedPublishesPerSecond < 0.98 * r.TargetPublishesPerSecond)
        {
            return (false, $"publishes fell behind: {r.AchievedPublishesPerSecond:0} of {r.TargetPublishesPerSecond:0} a second accepted");
        }
        if (r.LatencyFromSchedule.P99Ms > MaxP99Milliseconds)
        {
            return (false, string.Create(CultureInfo.InvariantCulture, $"p99 from schedule {r.LatencyFromSchedule.P99Ms:0.0} ms > {MaxP99Milliseconds} ms"));
        }
        return (true, string.Create(CultureInfo.InvariantCulture, $"p99 from schedule {r.LatencyFromSchedule.P99Ms:0.00} ms, every delivery arrived"));
    }

    /// <summary>Every step, then the highest sustained deliveries per second of each target and their ratio.</summary>
    /// <param name="serverCores">How many cores the servers were pinned to (--server-cpus), which turns the highest rate into a rate per core; null: not pinned.</param>
    public static void WriteVerdicts(TextWriter output, IReadOnlyList<RunReport> reports, IReadOnlyList<string> targets, int? serverCores = null)
    {
        output.WriteLine();
        output.WriteLine($"== find-max (a step holds when p99 from schedule <= {MaxP99Milliseconds} ms and every delivery arrived)");
        output.WriteLine($"{"shape",-14} {"step",4} {"target",-9} {"pub/s",8} {"deliveries/s",12} {"p99 sched",10} {"server CPU%",11}  verdict");
        foreach (var r in reports.Where(r => r.Search is not null))
        {
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{r.Search!.Shape,-14} {r.Search.Step,4} {r.Target,-9} {r.TargetPublishesPerSecond,8:0} {r.DeliveriesPerSecond,12:0} {r.LatencyFromSchedule.P99Ms,10:0.00} "
                + $"{r.Server?.CpuPercentOfOneCore ?? double.NaN,11:0.0}  {(r.Search.Holds ? "holds" : "STOP")}: {r.Search.Verdict}"));
        }
        foreach (var shape in reports.Where(r => r.Search is not null).GroupBy(r => r.Search!.Shape))
        {
            var best = targets.Select(t => shape.Where(r => r.Target == t && r.Search!.Holds).MaxBy(r => r.DeliveriesPerSecond)).ToList();
            var stops = targets.Select(t => shape.Where(r => r.Target == t && !r.Search!.Holds).Select(r => r.Search!.Verdict).FirstOrDefault()).ToList();
            output.WriteLine($"{shape.Key}: highest sustained deliveries/s:");
            for (var i = 0; i < targets.Count; i++)
            {
                var held = best[i] is { } b
                    ? string.Create(CultureInfo.InvariantCulture, $"{b.DeliveriesPerSecond:0} (step {b.Search!.Step}, {b.TargetPublishesPerSecond:0} publishes/s")
                        + (serverCores is { } cores ? string.Create(CultureInfo.InvariantCulture, $"; {b.DeliveriesPerSecond / cores:0} per core of the {cores} it was pinned to)") : ")")
                    : "none: not even the first step held";
                output.WriteLine($"   {targets[i],-9} {held}; " + (stops[i] is { } why ? "stopped by " + why : "every step held: raise --find-max-steps to go further"));
            }
            if (targets.Count > 1 && best[^1] is { } reference && reference.DeliveriesPerSecond > 0)
            {
                for (var i = 0; i < targets.Count - 1; i++)
                {
                    if (best[i] is { } b)
                    {
                        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"   {targets[i]}/{targets[^1]}: {b.DeliveriesPerSecond / reference.DeliveriesPerSecond:0.00}"));
                    }
                }
            }
        }
    }
}
