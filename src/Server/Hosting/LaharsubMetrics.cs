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
    private readonly ILaharsubStore _store;

    private StoreStatistics _lastStatistics;

    /// <summary>Creates the instruments; the gauges read <paramref name="store"/> when collected.</summary>
    public LaharsubMetrics(IMeterFactory meterFactory, ILaharsubStore store)
    {
        _store = store;
        var meter = meterFactory.Create(MeterName);
        _published = meter.CreateCounter<long>("laharsub.messages.published", "{message}", "Messages accepted over HTTP.");
        _delivered = meter.CreateCounter<long>("laharsub.messages.delivered", "{message}", "Messages sent in poll responses (one per subscriber that got it).");
        _polls = meter.CreateCounter<long>("laharsub.polls", "{poll}", "Polls ended, by laharsub.poll.outcome: answered, timeout, aborted, shutdown, not_found, error.");
        _activePolls = meter.CreateUpDownCounter<long>("laharsub.polls.active", "{poll}", "Polls being answered or waiting for a message.");
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
