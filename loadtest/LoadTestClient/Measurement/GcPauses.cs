using System.Globalization;

namespace Laharsub.LoadTestClient.Measurement;

/// <summary>
/// One garbage collection pause: from the runtime's SuspendEE start to its RestartEE end, in wall-clock
/// UTC microseconds, with the generation of the collection inside it (-1 for the pauses of a background
/// gen-2 collection that hold none) and the bytes it promoted.
/// </summary>
internal readonly record struct GcPause(long StartUtcMicroseconds, long EndUtcMicroseconds, int Generation, string Type, long PromotedBytes);

/// <summary>
/// Turns the runtime's GC events, as they arrive, into pauses. The same for the LoadTestClient's own
/// runtime (an <see cref="System.Diagnostics.Tracing.EventListener"/>) and for a server's (HeapSampler over
/// EventPipe), so that both files mean the same thing.
/// </summary>
internal sealed class GcPauseTracker
{
    private long? _suspendedAt;
    private int _generation = -1;
    private string? _type;
    private long _promoted;

    public void Suspending(long atUtcMicroseconds)
    {
        _suspendedAt = atUtcMicroseconds;
        _generation = -1;
        _type = null;
        _promoted = 0;
    }

    /// <summary>A collection started (GCStart's Depth and Type); the first of a pause names it.</summary>
    public void Collecting(int generation, int type)
    {
        if (_suspendedAt is not null && _type is null)
        {
            _generation = generation;
            // The runtime's GCType: 0 a blocking collection, 1 a background one, 2 a foreground one during a background one.
            _type = type switch { 1 => "background", 2 => "foreground", _ => "blocking" };
        }
    }

    /// <summary>GCHeapStats' promoted bytes by generation (0 to 4): the condemned generations' are what the collection kept.</summary>
    public void Promoted(ReadOnlySpan<long> promotedByGeneration)
    {
        if (_suspendedAt is null)
        {
            return;
        }
        var condemned = _generation < 0 ? promotedByGeneration.Length - 1 : Math.Min(_generation, promotedByGeneration.Length - 1);
        long total = 0;
        for (var g = 0; g <= condemned; g++)
        {
            total += promotedByGeneration[g];
        }
        _promoted = total;
    }

    /// <summary>The threads run again: the pause that ends, or null when its start was not seen.</summary>
    public GcPause? Restarted(long atUtcMicroseconds)
    {
        if (_suspendedAt is not { } start)
        {
            return null;
        }
        _suspendedAt = null;
        return new GcPause(start, atUtcMicroseconds, _generation, _type ?? "background-pause", _promoted);
    }
}

/// <summary>GC pauses as CSV, the format loadtest/scripts/tail_attribution.py reads for the server's and the generator's pauses.</summary>
internal sealed class GcPauseCsv : IDisposable
{
    public const string Header = "start_utc_us,end_utc_us,pause_us,generation,type,promoted_bytes";

    private readonly StreamWriter _writer;
    private readonly Lock _lock = new();
    private bool _disposed;

    public GcPauseCsv(string path)
    {
        _writer = new StreamWriter(path, append: false) { AutoFlush = true };
        _writer.WriteLine(Header);
    }

    public void Write(GcPause pause)
    {
        lock (_lock)
        {
            // An event the runtime still dispatches after the listener closed: the run is over.
            if (!_disposed)
            {
                _writer.WriteLine(Row(pause));
            }
        }
    }

    public static string Row(GcPause pause) => string.Create(CultureInfo.InvariantCulture,
        $"{pause.StartUtcMicroseconds},{pause.EndUtcMicroseconds},{pause.EndUtcMicroseconds - pause.StartUtcMicroseconds},{(pause.Generation < 0 ? "" : pause.Generation.ToString(CultureInfo.InvariantCulture))},{pause.Type},{pause.PromotedBytes}");

    public void Dispose()
    {
        lock (_lock)
        {
            _disposed = true;
            _writer.Dispose();
        }
    }
}
