using System.Diagnostics.Metrics;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Diagnostics;

/// <summary>
/// Laharsub's metrics, on the <c>Laharsub.Server</c> meter of the host's <see cref="IMeterFactory"/>:
/// readable with <c>dotnet-counters monitor --counters Laharsub.Server</c> or any OpenTelemetry exporter.
/// Instruments cost next to nothing while nobody listens, so they are always on.
/// </summary>
internal sealed class LaharsubMetrics
{
    /// <summary>The meter's name.</summary>
    public const string MeterName = LaharsubDiagnostics.MeterName;

    private readonly Counter<long> _published;
    private readonly Counter<long> _fastPath;
    private readonly Counter<long> _delivered;
    private readonly Counter<long> _polls;
    private readonly UpDownCounter<long> _activePolls;
    private readonly UpDownCounter<long> _queuedFrames;
    private readonly Histogram<double> _deliveryLatency;
    private readonly ILaharsubStore _store;
    private readonly TimeProvider _timeProvider;

    private StoreStatistics _lastStatistics;

    /// <summary>
    /// Bucket bounds of <c>laharsub.delivery.latency</c>, in seconds: a waiting poll is answered within a
    /// millisecond or so, while a subscriber catching up reads messages as old as the retention.
    /// </summary>
    private static readonly double[] DeliveryLatencyBuckets =
        [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

    /// <summary>Creates the instruments; the gauges read <paramref name="store"/> when collected.</summary>
    public LaharsubMetrics(IMeterFactory meterFactory, ILaharsubStore store, TimeProvider timeProvider)
    {
        _store = store;
        _timeProvider = timeProvider;
        var meter = meterFactory.Create(MeterName);
        _published = meter.CreateCounter<long>("laharsub.messages.published", "{message}", "Messages accepted over HTTP.");
        _delivered = meter.CreateCounter<long>("laharsub.messages.delivered", "{message}", "Messages sent in poll responses and on streams (one per subscriber that got it).");
        _polls = meter.CreateCounter<long>("laharsub.polls", "{poll}", "Polls and streams ended, by laharsub.poll.outcome: answered, timeout, aborted, shutdown, not_found, error, closed (a stream its client ended), too_slow (a stream whose client did not read).");
        _activePolls = meter.CreateUpDownCounter<long>("laharsub.polls.active", "{poll}", "Polls and streams being answered or waiting for a message.");
        _queuedFrames = meter.CreateUpDownCounter<long>("laharsub.websocket.frames.queued", "{frame}",
            "Subscribe and unsubscribe frames read from WebSockets and not yet applied by their subscription (at most 16 per socket: then the socket is not read).");
        _deliveryLatency = meter.CreateHistogram("laharsub.delivery.latency", "s",
            "Time from a message's publish to a poll answer carrying it being written, once per delivered message (a subscriber catching up counts the message's age).",
            tags: null, new InstrumentAdvice<double> { HistogramBucketBoundaries = DeliveryLatencyBuckets });
        _fastPath = meter.CreateCounter<long>("laharsub.fast_path.requests", "{request}",
            "Requests the connection-level fast path (Laharsub:FastPath) answered, by laharsub.request (poll, stream: a Server-Sent Events stream, websocket, publish), requests it gave to the ASP.NET Core pipeline (laharsub.request pipeline) and connections it gave to Kestrel from a request on or whole (handed_over), each with why (laharsub.reason: origin, authorization, diagnostic_listener, idempotency_key, token_unvalidated, access_refused, application_authorization, host_conventions, route, ...).");
        meter.CreateObservableGauge("laharsub.topics", () => Statistics().TopicCount, "{topic}", "Topics that exist.");
        meter.CreateObservableGauge("laharsub.retained.bytes", () => Statistics().RetainedBytes, "By", "Message bytes retained, against Laharsub:MaxRetainedBytes.");
    }

    /// <summary>
    /// The store's statistics without blocking the collection: exact when the store answers at once (in
    /// memory), otherwise the last answer while a fresh one is fetched.
    /// </summary>
    private StoreStatistics Statistics()
    {
        try
        {
            var pending = _store.GetStatisticsAsync();
            if (pending.IsCompletedSuccessfully)
            {
                return _lastStatistics = pending.Result;
            }
            _ = RememberAsync(pending);
        }
        catch (LaharsubStoreUnavailableException)
        {
        }
        return _lastStatistics;
    }

    private async Task RememberAsync(ValueTask<StoreStatistics> pending)
    {
        try
        {
            _lastStatistics = await pending.ConfigureAwait(false);
        }
        catch (LaharsubStoreUnavailableException)
        {
        }
    }

    internal void Published() => _published.Add(1);

    /// <summary>The fast path answered a request (<paramref name="request"/> poll or publish), or handed its connection over.</summary>
    internal void FastPath(string request) => _fastPath.Add(1, new KeyValuePair<string, object?>("laharsub.request", request));

    /// <summary>A request (or a whole connection) given to the pipeline, and why (<c>laharsub.reason</c>).</summary>
    internal void FastPath(string request, string reason) =>
        _fastPath.Add(1, new KeyValuePair<string, object?>("laharsub.request", request), new KeyValuePair<string, object?>("laharsub.reason", reason));

    internal void PollStarted() => _activePolls.Add(1);

    /// <summary>A WebSocket queued <paramref name="frames"/> more subscribe or unsubscribe frames (negative: applied or dropped).</summary>
    internal void FramesQueued(int frames) => _queuedFrames.Add(frames);

    /// <summary>
    /// Records each message's delivery latency after its answer was written. Free while nobody listens
    /// (one check of <see cref="Instrument.Enabled"/> per answer); never allocates.
    /// </summary>
    internal void AnswerWritten(IReadOnlyList<Message> messages)
    {
        if (!_deliveryLatency.Enabled || messages.Count == 0)
        {
            return;
        }
        var now = _timeProvider.GetUtcNow().UtcTicks;
        for (var i = 0; i < messages.Count; i++)
        {
            // Another instance's clock published it (a shared store): never report a negative time.
            var ticks = Math.Max(0, now - messages[i].PublishedAt.UtcTicks);
            _deliveryLatency.Record((double)ticks / TimeSpan.TicksPerSecond);
        }
    }

    /// <summary>A stream wrote <paramref name="messages"/>: counted as delivered, with their latencies.</summary>
    internal void StreamWrote(IReadOnlyList<Message> messages)
    {
        if (messages.Count > 0)
        {
            _delivered.Add(messages.Count);
            AnswerWritten(messages);
        }
    }

    internal void PollEnded(string outcome, int messages)
    {
        _activePolls.Add(-1);
        _polls.Add(1, new KeyValuePair<string, object?>("laharsub.poll.outcome", outcome));
        if (messages > 0)
        {
            _delivered.Add(messages);
        }
    }
}
