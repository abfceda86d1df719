using System.Diagnostics.Metrics;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Hosting;

/// <summary>
/// Laharsub's metrics, on the <c>Laharsub.Server</c> meter of the host's <see cref="IMeterFactory"/>:
/// readable with <c>dotnet-counters monitor --counters Laharsub.Server</c> or any OpenTelemetry exporter.
/// Instruments cost next to nothing while nobody listens, so they are always on.
/// </summary>
public sealed class LaharsubMetrics
{
    /// <summary>The meter's name.</summary>
    public const string MeterName = "Laharsub.Server";

    private readonly Counter<long> _published;
    private readonly Counter<long> _delivered;
    private readonly Counter<long> _polls;
    private readonly UpDownCounter<long> _activePolls;

    /// <summary>Creates the instruments; the gauges read <paramref name="backend"/> when collected.</summary>
    public LaharsubMetrics(IMeterFactory meterFactory, ILaharsubBackend backend)
    {
        var meter = meterFactory.Create(MeterName);
        _published = meter.CreateCounter<long>("laharsub.messages.published", "{message}", "Messages accepted over HTTP.");
        _delivered = meter.CreateCounter<long>("laharsub.messages.delivered", "{message}", "Messages sent in poll responses (one per subscriber that got it).");
        _polls = meter.CreateCounter<long>("laharsub.polls", "{poll}", "Polls ended, by laharsub.poll.outcome: answered, timeout, aborted, shutdown, not_found, error.");
        _activePolls = meter.CreateUpDownCounter<long>("laharsub.polls.active", "{poll}", "Polls being answered or waiting for a message.");
        meter.CreateObservableGauge("laharsub.topics", () => backend.TopicCount, "{topic}", "Topics that exist.");
        meter.CreateObservableGauge("laharsub.retained.bytes", () => backend.RetainedBytes, "By", "Message bytes retained, against Laharsub:MaxRetainedBytes.");
    }

    internal void Published() => _published.Add(1);

    internal void PollStarted() => _activePolls.Add(1);

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
