using System.Diagnostics.Tracing;

namespace Laharsub.LoadTestClient.Measurement;

/// <summary>
/// The generator's own GC pauses, from its runtime's GC events, written to CSV as they end: a pause here
/// stalls every simulated client at once, and a delivery received late because of it looks like a
/// server stall unless it is set against this file.
/// </summary>
internal sealed class ClientGcLog(string path) : EventListener
{
    private const string RuntimeProvider = "Microsoft-Windows-DotNETRuntime";
    private const EventKeywords GcKeyword = (EventKeywords)0x1;

    // The runtime's GC event ids (ClrEtwAll.man).
    private const int GCStart = 1;
    private const int GCRestartEEEnd = 3;
    private const int GCHeapStats = 4;
    private const int GCSuspendEEBegin = 9;

    // Initialised before the base constructor, which may already enable the runtime's source.
    private readonly GcPauseTracker _tracker = new();
    private readonly GcPauseCsv _csv = new(path);
    private int _pauses;

    public string Path { get; } = path;

    /// <summary>The pauses written so far.</summary>
    public int Pauses => Volatile.Read(ref _pauses);

    protected override void OnEventSourceCreated(EventSource eventSource)
    {
        if (eventSource.Name == RuntimeProvider)
        {
            EnableEvents(eventSource, EventLevel.Informational, GcKeyword);
        }
    }

    protected override void OnEventWritten(EventWrittenEventArgs eventData)
    {
        // Events come from the runtime's one dispatch thread, with the time they happened.
        var at = (eventData.TimeStamp.ToUniversalTime() - DateTime.UnixEpoch).Ticks / 10;
        switch (eventData.EventId)
        {
            case GCSuspendEEBegin:
                _tracker.Suspending(at);
                break;
            case GCStart when eventData.Payload is { } start:
                _tracker.Collecting(Convert.ToInt32(Value(eventData, start, "Depth"), System.Globalization.CultureInfo.InvariantCulture),
                    Convert.ToInt32(Value(eventData, start, "Type"), System.Globalization.CultureInfo.InvariantCulture));
                break;
            case GCHeapStats when eventData.Payload is { } stats:
                Span<long> promoted = stackalloc long[5];
                for (var g = 0; g < promoted.Length; g++)
                {
                    promoted[g] = Convert.ToInt64(Value(eventData, stats, "TotalPromotedSize" + g) ?? 0L, System.Globalization.CultureInfo.InvariantCulture);
                }
                _tracker.Promoted(promoted);
                break;
            case GCRestartEEEnd when _tracker.Restarted(at) is { } pause:
                _csv.Write(pause);
                Interlocked.Increment(ref _pauses);
                break;
        }
    }

    private static object? Value(EventWrittenEventArgs eventData, System.Collections.ObjectModel.ReadOnlyCollection<object?> payload, string name)
    {
        var index = eventData.PayloadNames?.IndexOf(name) ?? -1;
        return index >= 0 && index < payload.Count ? payload[index] : null;
    }

    public override void Dispose()
    {
        base.Dispose();
        _csv.Dispose();
    }
}
