using System.Diagnostics;
using System.Diagnostics.Tracing;
using System.Globalization;
using Laharsub.LoadTestClient.Measurement;
using Microsoft.Diagnostics.NETCore.Client;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

const string Usage = """
    Usage:
      Laharsub.HeapSampler counters PID INTERVAL_SECONDS OUT.csv
          Append the process's System.Runtime counters (GC heap size, working set, GC committed, gen 0/1/2,
          LOH and POH sizes, GC count) to OUT.csv every INTERVAL_SECONDS until the process exits or Ctrl+C.
      Laharsub.HeapSampler gcs PID OUT.csv
          Append one row per garbage collection in the process to OUT.csv (time, number, generation, reason,
          heap size after it by generation) until the process exits or Ctrl+C: the heap a leak would raise
          is the one left after gen-2 collections.
      Laharsub.HeapSampler pauses PID SECONDS [--csv PAUSES.csv] [--counters COUNTERS.csv [--interval-ms MS]]
          Watch the process for SECONDS (or until it exits) and print every garbage collection's pause (execution
          engine suspended to restarted) by generation and kind, then the count, total, p50, p99 and longest
          pause of each generation: what a latency tail of the server has to be checked against.
          --csv also writes each pause with its wall-clock UTC start and end (µs), generation, type and bytes
          promoted; --counters samples the process's runtime counters (thread-pool queue length and completed
          items, threads, timers, allocation, GC heap) every MS (default 100) over the same session, with the
          wall-clock UTC time of each sample. loadtest/scripts/tail_attribution.py joins both with the
          LoadTestClient's --slow-log.
      Laharsub.HeapSampler allocs PID SECONDS [TOP]
          Watch the process for SECONDS and print what it allocated by type, from the runtime's allocation
          ticks (one event per ~100 KB allocated, naming the type of the object that crossed it): the TOP (40)
          types' share of the bytes allocated. What drives how often the GC runs, where 'types' says what it keeps.
      Laharsub.HeapSampler types DUMP [TOP]
          The objects in a dump (createdump -f DUMP PID, after 'gc PID' so that little garbage is left) by
          type: bytes and count of the TOP (40) largest types. Divided by the polls held, it is the
          memory per held poll, and says whose it is (Kestrel's connection or the poll's request).
      Laharsub.HeapSampler young DUMP [TOP]
          The objects in a dump taken under load WITHOUT an induced GC that are still in generation 0 and
          reachable from the roots, by type: what the next gen0 collection would find alive and copy.
      Laharsub.HeapSampler gc PID
          Induce a blocking full GC in the process (the GCHeapCollect keyword, as dotnet-gcdump does) and
          print the heap's generation sizes after it.
    """;

if (args is ["young", var youngDump, ..] && File.Exists(youngDump))
{
    return YoungHistogram(youngDump, args.Length > 2 && int.TryParse(args[2], CultureInfo.InvariantCulture, out var youngTop) ? youngTop : 40);
}
if (args is ["types", var dump, ..] && File.Exists(dump))
{
    return TypeHistogram(dump, args.Length > 2 && int.TryParse(args[2], CultureInfo.InvariantCulture, out var top) ? top : 40);
}
if (args.Length < 2 || !int.TryParse(args[1], CultureInfo.InvariantCulture, out var pid))
{
    Console.Error.WriteLine(Usage);
    return 2;
}

var client = new DiagnosticsClient(pid);
switch (args[0])
{
    case "counters" when args.Length == 4 && int.TryParse(args[2], CultureInfo.InvariantCulture, out var interval) && interval > 0:
        return SampleCounters(client, interval, args[3]);
    case "gc":
        return InduceGc(client);
    case "gcs" when args.Length == 3:
        return RecordCollections(client, args[2]);
    case "allocs" when args.Length >= 3 && int.TryParse(args[2], CultureInfo.InvariantCulture, out var allocSeconds) && allocSeconds > 0:
        return RecordAllocations(client, TimeSpan.FromSeconds(allocSeconds), args.Length > 3 && int.TryParse(args[3], CultureInfo.InvariantCulture, out var allocTop) ? allocTop : 40);
    case "pauses" when args.Length >= 3 && int.TryParse(args[2], CultureInfo.InvariantCulture, out var seconds) && seconds > 0
        && PauseFiles.TryParse(args.AsSpan(3)) is { } files:
        return RecordPauses(client, TimeSpan.FromSeconds(seconds), files);
    default:
        Console.Error.WriteLine(Usage);
        return 2;
}

static int SampleCounters(DiagnosticsClient client, int intervalSeconds, string outPath)
{
    // The counters the soak report needs, as System.Runtime's EventCounters name them.
    string[] columns = ["gc-heap-size", "working-set", "gc-committed", "gen-0-size", "gen-1-size", "gen-2-size", "loh-size", "poh-size", "gen-2-gc-count", "threadpool-thread-count"];
    var provider = new EventPipeProvider("System.Runtime", EventLevel.Informational, 0xffffffff,
        new Dictionary<string, string> { ["EventCounterIntervalSec"] = intervalSeconds.ToString(CultureInfo.InvariantCulture) });
    using var session = client.StartEventPipeSession([provider], requestRundown: false);
    Console.CancelKeyPress += (_, e) => { e.Cancel = true; session.Stop(); };
    var newFile = !File.Exists(outPath);
    using var writer = new StreamWriter(outPath, append: true) { AutoFlush = true };
    if (newFile)
    {
        writer.WriteLine("unix_time," + string.Join(',', columns));
    }
    using var source = new EventPipeEventSource(session.EventStream);
    var rows = new CounterRows(source, row =>
        writer.WriteLine(DateTimeOffset.UtcNow.ToUnixTimeSeconds().ToString(CultureInfo.InvariantCulture) + "," + row.Cells(columns)));
    source.Process();
    rows.Flush();
    return 0;
}

static int RecordCollections(DiagnosticsClient client, string outPath)
{
    var provider = new EventPipeProvider("Microsoft-Windows-DotNETRuntime", EventLevel.Informational, 0x1);
    using var session = client.StartEventPipeSession([provider], requestRundown: false);
    Console.CancelKeyPress += (_, e) => { e.Cancel = true; session.Stop(); };
    var newFile = !File.Exists(outPath);
    using var writer = new StreamWriter(outPath, append: true) { AutoFlush = true };
    if (newFile)
    {
        writer.WriteLine("unix_ms,gc,generation,reason,total_bytes,gen0_bytes,gen1_bytes,gen2_bytes,loh_bytes,poh_bytes,promoted_bytes");
    }
    using var source = new EventPipeEventSource(session.EventStream);
    GCStartTraceData? started = null;
    source.Clr.GCStart += e => started = (GCStartTraceData)e.Clone();
    source.Clr.GCHeapStats += e =>
    {
        if (started is null)
        {
            return;
        }
        writer.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()},{started.Count},{started.Depth},{started.Reason},{e.TotalHeapSize},{e.GenerationSize0},{e.GenerationSize1},{e.GenerationSize2},{e.GenerationSize3},{e.GenerationSize4},{e.TotalPromoted}"));
        started = null;
    };
    source.Process();
    return 0;
}

static int RecordAllocations(DiagnosticsClient client, TimeSpan duration, int top)
{
    // GC keyword at Verbose: GCAllocationTick, one per ~100 KB allocated on a heap, with the type of the
    // object that crossed the threshold: a sample of allocations weighted by bytes.
    var provider = new EventPipeProvider("Microsoft-Windows-DotNETRuntime", EventLevel.Verbose, 0x1);
    using var session = client.StartEventPipeSession([provider], requestRundown: false);
    using var source = new EventPipeEventSource(session.EventStream);
    var byType = new Dictionary<string, (long Ticks, long Bytes)>(StringComparer.Ordinal);
    var collections = 0;
    source.Clr.GCAllocationTick += (GCAllocationTickTraceData e) =>
    {
        var name = e.TypeName ?? "?";
        var entry = byType.GetValueOrDefault(name);
        byType[name] = (entry.Ticks + 1, entry.Bytes + e.AllocationAmount64);
    };
    source.Clr.GCStart += _ => collections++;
    var stop = Task.Delay(duration).ContinueWith(_ => session.Stop(), TaskScheduler.Default);
    source.Process();
    var total = byType.Values.Sum(v => v.Bytes);
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"{total / 1048576.0:0.0} MiB allocated in {duration.TotalSeconds:0} s ({total / 1048576.0 / duration.TotalSeconds:0.0} MiB/s, sampled), {collections} GCs"));
    foreach (var (name, (ticks, bytes)) in byType.OrderByDescending(entry => entry.Value.Bytes).Take(top))
    {
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {100.0 * bytes / Math.Max(total, 1),5:0.0} %  {ticks,6} ticks  {name}"));
    }
    return 0;
}

static int RecordPauses(DiagnosticsClient client, TimeSpan duration, PauseFiles files)
{
    // Thread-pool queue length is polled: each sample is the queue at that moment, not its peak since the last.
    string[] counterColumns = ["threadpool-queue-length", "threadpool-completed-items-count", "threadpool-thread-count", "active-timer-count",
        "alloc-rate", "gc-heap-size", "monitor-lock-contention-count"];
    List<EventPipeProvider> providers = [new("Microsoft-Windows-DotNETRuntime", EventLevel.Informational, 0x1)];
    if (files.Counters is not null)
    {
        providers.Add(new EventPipeProvider("System.Runtime", EventLevel.Informational, 0xffffffff,
            new Dictionary<string, string> { ["EventCounterIntervalSec"] = (files.IntervalMs / 1000).ToString(CultureInfo.InvariantCulture) }));
    }
    using var session = client.StartEventPipeSession(providers, requestRundown: false);
    using var source = new EventPipeEventSource(session.EventStream);
    var clock = new TraceClock();
    var tracker = new GcPauseTracker();
    using var pauseCsv = files.Csv is null ? null : new GcPauseCsv(files.Csv);
    using var counterCsv = files.Counters is null ? null : new StreamWriter(files.Counters, append: false) { AutoFlush = true };
    counterCsv?.WriteLine("sample_utc_us,interval_us," + string.Join(',', counterColumns));
    var counterRows = counterCsv is null ? null : new CounterRows(source, row =>
        counterCsv.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{clock.UtcMicroseconds(row.At)},{row.IntervalSeconds * 1e6:0},{row.Cells(counterColumns)}")));
    // A pause runs from SuspendEEStart to RestartEEStop; the GCs inside it name its generation. A
    // background gen-2 GC has pauses of its own (start and end), reported as "gen2 background".
    // Each pause is split into what it spent: suspending the threads, the GC itself (GCStart to GCEnd),
    // and inside the GC each mark phase per heap (MarkWithType fires as a phase ends: stack roots,
    // finalization queue, handles, older generations' cards), with the bytes each phase kept alive.
    double? suspendedAt = null, suspendDone = null, gcStartedAt = null, gcMs = null;
    string? kind = null;
    var markPhases = new Dictionary<string, (double Ms, long Bytes)>(StringComparer.Ordinal);
    var lastMarkByHeap = new Dictionary<int, double>();
    GCHeapStatsTraceData? heapStats = null;
    var pauses = new List<(string Kind, double Milliseconds)>();
    source.Clr.GCSuspendEEStart += e =>
    {
        tracker.Suspending(clock.UtcMicroseconds(e));
        suspendedAt = e.TimeStampRelativeMSec;
        suspendDone = gcStartedAt = gcMs = null;
        kind = null;
        markPhases.Clear();
        heapStats = null;
    };
    source.Clr.GCSuspendEEStop += e => suspendDone ??= e.TimeStampRelativeMSec;
    source.Clr.GCStart += (GCStartTraceData e) =>
    {
        tracker.Collecting(e.Depth, (int)e.Type);
        kind ??= $"gen{e.Depth}{(e.Type == GCType.BackgroundGC ? " background" : e.Type == GCType.ForegroundGC ? " foreground" : "")}";
        gcStartedAt = e.TimeStampRelativeMSec;
        lastMarkByHeap.Clear();
    };
    source.Clr.GCMarkWithType += (GCMarkWithTypeTraceData e) =>
    {
        if (gcStartedAt is not { } gcStart)
        {
            return;
        }
        var since = lastMarkByHeap.TryGetValue(e.HeapNum, out var previous) ? previous : gcStart;
        lastMarkByHeap[e.HeapNum] = e.TimeStampRelativeMSec;
        var phase = MarkPhaseName(e.Type);
        var entry = markPhases.GetValueOrDefault(phase);
        // Heaps mark in parallel: keep the slowest heap's time for a phase, and the bytes of all heaps.
        markPhases[phase] = (Math.Max(entry.Ms, e.TimeStampRelativeMSec - since), entry.Bytes + e.Promoted);
    };
    source.Clr.GCStop += e =>
    {
        if (gcStartedAt is { } gcStart)
        {
            gcMs = (gcMs ?? 0) + e.TimeStampRelativeMSec - gcStart;
        }
    };
    source.Clr.GCHeapStats += e =>
    {
        heapStats = (GCHeapStatsTraceData)e.Clone();
        tracker.Promoted([e.TotalPromotedSize0, e.TotalPromotedSize1, e.TotalPromotedSize2, e.TotalPromotedSize3, e.TotalPromotedSize4]);
    };
    source.Clr.GCRestartEEStop += e =>
    {
        if (tracker.Restarted(clock.UtcMicroseconds(e)) is { } ended)
        {
            pauseCsv?.Write(ended);
        }
        if (suspendedAt is { } start)
        {
            var pause = e.TimeStampRelativeMSec - start;
            var name = kind ?? "gen2 background (other pause)";
            pauses.Add((name, pause));
            var suspend = suspendDone is { } done ? done - start : double.NaN;
            var line = string.Create(CultureInfo.InvariantCulture,
                $"{e.TimeStampRelativeMSec / 1000:0.000} s  {name,-28} {pause,8:0.000} ms  (suspend {suspend:0.0}, gc {gcMs ?? double.NaN:0.0})");
            if (heapStats is { } stats)
            {
                line += string.Create(CultureInfo.InvariantCulture,
                    $"  promoted gen0 {stats.TotalPromotedSize0 / 1048576.0:0.0} MiB gen1 {stats.TotalPromotedSize1 / 1048576.0:0.0} MiB; pinned {stats.PinnedObjectCount}, handles {stats.GCHandleCount}");
            }
            Console.WriteLine(line);
            if (markPhases.Count > 0)
            {
                Console.WriteLine("      mark: " + string.Join(", ", markPhases.Select(p =>
                    string.Create(CultureInfo.InvariantCulture, $"{p.Key} {p.Value.Ms:0.0} ms {p.Value.Bytes / 1048576.0:0.0} MiB"))));
            }
        }
        suspendedAt = null;
    };
    var stop = Task.Delay(duration).ContinueWith(_ => session.Stop(), TaskScheduler.Default);
    var watching = Stopwatch.StartNew();
    source.Process();
    counterRows?.Flush();
    // The session ends early when the process exits (loadtest/scripts/tail.sh stops the server after the load).
    var watched = TimeSpan.FromTicks(Math.Min(duration.Ticks, watching.Elapsed.Ticks));
    Console.WriteLine($"{pauses.Count} pauses in {watched.TotalSeconds:0} s, {pauses.Sum(p => p.Milliseconds):0.0} ms in all");
    foreach (var group in pauses.GroupBy(p => p.Kind).OrderBy(g => g.Key, StringComparer.Ordinal))
    {
        var sorted = group.Select(p => p.Milliseconds).Order().ToArray();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {group.Key,-28} count {sorted.Length,5}  total {sorted.Sum(),9:0.0} ms  p50 {Percentile(sorted, 0.5),7:0.00}  p99 {Percentile(sorted, 0.99),7:0.00}  max {sorted[^1],7:0.00} ms"));
    }
    return 0;

    static double Percentile(double[] sorted, double quantile) => sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(quantile * sorted.Length) - 1)];

    // The runtime's GC_ROOT_KIND values, as MarkWithType reports them.
    static string MarkPhaseName(int type) => type switch
    {
        0 => "stacks",
        1 => "finalizer queue",
        2 => "handles",
        3 => "older generations (cards)",
        4 => "sized refs",
        5 => "overflow",
        6 => "dependent handles",
        7 => "new finalizable",
        _ => $"kind {type}",
    };
}

static int TypeHistogram(string dumpPath, int top)
{
    using var target = Microsoft.Diagnostics.Runtime.DataTarget.LoadDump(dumpPath);
    var runtime = target.ClrVersions[0].CreateRuntime();
    var byType = new Dictionary<string, (long Count, long Bytes)>(StringComparer.Ordinal);
    long total = 0;
    foreach (var obj in runtime.Heap.EnumerateObjects())
    {
        if (!obj.IsValid || obj.Type?.Name is not { } name)
        {
            continue;
        }
        var size = (long)obj.Size;
        total += size;
        var entry = byType.GetValueOrDefault(name);
        byType[name] = (entry.Count + 1, entry.Bytes + size);
    }
    const double MiB = 1024 * 1024;
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{total / MiB:0.0} MiB in {byType.Values.Sum(t => t.Count)} objects (live or not yet collected)"));
    foreach (var (name, entry) in byType.OrderByDescending(t => t.Value.Bytes).Take(top))
    {
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{entry.Bytes / MiB,9:0.00} MiB {entry.Count,9} {name}"));
    }
    return 0;
}

static int YoungHistogram(string dumpPath, int top)
{
    using var target = Microsoft.Diagnostics.Runtime.DataTarget.LoadDump(dumpPath);
    var heap = target.ClrVersions[0].CreateRuntime().Heap;
    // Marks from the roots as the GC would (old objects that are garbage but still refer to young ones are
    // not counted, so this is a little under what a gen0 collection promotes).
    var seen = new HashSet<ulong>();
    var pending = new Stack<ulong>();
    foreach (var root in heap.EnumerateRoots())
    {
        if (root.Object.Address != 0 && seen.Add(root.Object.Address))
        {
            pending.Push(root.Object.Address);
        }
    }
    while (pending.TryPop(out var address))
    {
        var obj = heap.GetObject(address);
        if (!obj.IsValid)
        {
            continue;
        }
        foreach (var child in obj.EnumerateReferenceAddresses(carefully: true, considerDependantHandles: true))
        {
            if (child != 0 && seen.Add(child))
            {
                pending.Push(child);
            }
        }
    }
    var byType = new Dictionary<string, (long Count, long Bytes)>(StringComparer.Ordinal);
    var strings = new List<string>();
    long total = 0, live = 0;
    foreach (var address in seen)
    {
        var segment = heap.GetSegmentByAddress(address);
        if (segment is null || segment.GetGeneration(address) != 0)
        {
            continue;
        }
        var obj = heap.GetObject(address);
        if (!obj.IsValid || obj.Type?.Name is not { } name)
        {
            continue;
        }
        var size = (long)obj.Size;
        total += size;
        live++;
        var entry = byType.GetValueOrDefault(name);
        byType[name] = (entry.Count + 1, entry.Bytes + size);
        if (name == "System.String" && strings.Count < 12 && live % 97 == 0)
        {
            strings.Add(obj.AsString(200) ?? "");
        }
    }
    const double MiB = 1024 * 1024;
    foreach (var sample in strings)
    {
        Console.WriteLine($"  a young string: {sample}");
    }
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{total / MiB:0.0} MiB in {live} reachable objects in generation 0 ({seen.Count} reachable in all)"));
    foreach (var (name, entry) in byType.OrderByDescending(t => t.Value.Bytes).Take(top))
    {
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{entry.Bytes / MiB,9:0.00} MiB {entry.Count,9} {name}"));
    }
    return 0;
}

static int InduceGc(DiagnosticsClient client)
{
    // GC (0x1) for the GC events; GCHeapCollect (0x800000) makes the runtime run a blocking gen-2 GC when
    // the session starts.
    const long GcKeywords = 0x1 | 0x800000;
    var provider = new EventPipeProvider("Microsoft-Windows-DotNETRuntime", EventLevel.Informational, GcKeywords);
    using var session = client.StartEventPipeSession([provider], requestRundown: false);
    using var source = new EventPipeEventSource(session.EventStream);
    var induced = false;
    var done = false;
    source.Clr.GCStart += (GCStartTraceData e) =>
    {
        if (e.Reason == GCReason.Induced && e.Depth == 2)
        {
            induced = true;
        }
    };
    source.Clr.GCHeapStats += (GCHeapStatsTraceData e) =>
    {
        if (!induced || done)
        {
            return;
        }
        done = true;
        const double MiB = 1024 * 1024;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"after induced gen-2 GC: total {e.TotalHeapSize / MiB:0.00} MiB (gen0 {e.GenerationSize0 / MiB:0.00}, gen1 {e.GenerationSize1 / MiB:0.00}, gen2 {e.GenerationSize2 / MiB:0.00}, loh {e.GenerationSize3 / MiB:0.00}, poh {e.GenerationSize4 / MiB:0.00}), pinned {e.PinnedObjectCount}, handles {e.GCHandleCount}"));
        Task.Run(session.Stop);
    };
    var timeout = Task.Delay(TimeSpan.FromSeconds(60)).ContinueWith(_ => { if (!done) { session.Stop(); } }, TaskScheduler.Default);
    source.Process();
    if (!done)
    {
        Console.Error.WriteLine("No induced GC was seen within 60 s: is the process a .NET 5+ process that allows diagnostics (DOTNET_EnableDiagnostics not 0)?");
        return 1;
    }
    return 0;
}

/// <summary>The files of <c>pauses</c> beside its printed summary: <c>--csv</c>, <c>--counters</c> and their <c>--interval-ms</c>.</summary>
internal sealed record PauseFiles(string? Csv, string? Counters, double IntervalMs)
{
    /// <summary>The options after <c>pauses PID SECONDS</c>; null when one is unknown or lacks its value.</summary>
    public static PauseFiles? TryParse(ReadOnlySpan<string> options)
    {
        var files = new PauseFiles(null, null, 100);
        for (var i = 0; i + 1 < options.Length; i += 2)
        {
            var value = options[i + 1];
            switch (options[i])
            {
                case "--csv":
                    files = files with { Csv = value };
                    break;
                case "--counters":
                    files = files with { Counters = value };
                    break;
                case "--interval-ms" when double.TryParse(value, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var ms) && ms >= 1:
                    files = files with { IntervalMs = ms };
                    break;
                default:
                    return null;
            }
        }
        return options.Length % 2 == 0 ? files : null;
    }
}

/// <summary>
/// Where an event of the traced process happened, in wall-clock UTC µs. On Linux the runtime stamps events
/// with CLOCK_MONOTONIC, the clock the LoadTestClient stamps messages with, so the two are set on one
/// clock rather than on the trace's millisecond start time; a trace whose stamps are not that clock (far
/// from now) falls back to TraceEvent's own conversion, with a warning.
/// </summary>
internal sealed class TraceClock
{
    private static readonly long Tolerance = (long)TimeSpan.FromMinutes(1).TotalMicroseconds;
    private bool? _monotonic;

    public long UtcMicroseconds(TraceEvent e)
    {
        // The raw stamp is what is wanted here: on Linux it is CLOCK_MONOTONIC in nanoseconds (Check says when it is not).
#pragma warning disable CS0618
        var monotonic = e.TimeStampQPC / 1000;
#pragma warning restore CS0618
        _monotonic ??= Check(monotonic);
        return _monotonic.Value ? MonotonicClock.ToUnixMicroseconds(monotonic) : (e.TimeStamp.ToUniversalTime() - DateTime.UnixEpoch).Ticks / 10;
    }

    private static bool Check(long monotonic)
    {
        if (Math.Abs(monotonic - MonotonicClock.NowMicroseconds) < Tolerance)
        {
            return true;
        }
        Console.Error.WriteLine("warning: the trace's timestamps are not this machine's monotonic clock; wall-clock times come from the trace's start time (millisecond precision).");
        return false;
    }
}

/// <summary>One interval's counters (System.Runtime's EventCounters), by name, with the event that brought the first of them.</summary>
internal sealed record CounterRow(Dictionary<string, double> Values, TraceEvent At, double IntervalSeconds)
{
    public string Cells(IEnumerable<string> columns) =>
        string.Join(',', columns.Select(c => Values.TryGetValue(c, out var v) ? v.ToString("0.###", CultureInfo.InvariantCulture) : ""));
}

/// <summary>Gathers the counters of each interval into a row: they arrive one by one, and a repeated name starts the next interval's row.</summary>
internal sealed class CounterRows
{
    private readonly Action<CounterRow> _write;
    private CounterRow? _row;

    public CounterRows(TraceEventSource source, Action<CounterRow> write)
    {
        _write = write;
        source.Dynamic.All += e =>
        {
            if (e.EventName != "EventCounters" || e.PayloadValue(0) is not IDictionary<string, object> outer
                || outer["Payload"] is not IDictionary<string, object> payload)
            {
                return;
            }
            var name = (string)payload["Name"];
            var value = Convert.ToDouble(payload.TryGetValue("Mean", out var mean) ? mean : payload["Increment"], CultureInfo.InvariantCulture);
            if (_row is not null && _row.Values.ContainsKey(name))
            {
                Flush();
            }
            _row ??= new CounterRow(new Dictionary<string, double>(StringComparer.Ordinal), e.Clone(), payload.TryGetValue("IntervalSec", out var interval) ? Convert.ToDouble(interval, CultureInfo.InvariantCulture) : double.NaN);
            _row.Values[name] = value;
        };
    }

    public void Flush()
    {
        if (_row is { Values.Count: > 0 } row)
        {
            _write(row);
        }
        _row = null;
    }
}
