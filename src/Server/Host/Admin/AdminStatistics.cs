using System.Diagnostics.Metrics;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Host.Admin;

/// <summary>
/// What the admin page shows: this instance's totals, read from the <c>Laharsub.Server</c> meter with a
/// <see cref="MeterListener"/> (so no second set of counters exists), the store's counts, and a sample
/// of both every <see cref="AdminOptions.SampleInterval"/> for the rates and the chart.
/// </summary>
internal sealed partial class AdminStatistics : BackgroundService
{
    /// <summary>Samples kept for the chart: 5 minutes at the default interval.</summary>
    public const int HistoryLength = 60;

    private readonly MeterListener _listener = new();
    private readonly ILaharsubStore _store;
    private readonly LaharsubOptions _limits;
    private readonly AdminOptions _options;
    private readonly TimeProvider _timeProvider;
    private readonly ILogger<AdminStatistics> _logger;
    private readonly Queue<AdminSample> _history = new(HistoryLength);
    private readonly DateTimeOffset _startedAt;
    private long _published;
    private long _delivered;
    private long _activePolls;

    public AdminStatistics(IMeterFactory meters, ILaharsubStore store, IOptions<LaharsubOptions> limits, IOptions<AdminOptions> options,
        TimeProvider timeProvider, ILogger<AdminStatistics> logger)
    {
        _store = store;
        _limits = limits.Value;
        _options = options.Value;
        _timeProvider = timeProvider;
        _logger = logger;
        _startedAt = timeProvider.GetUtcNow();
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Scope == meters && instrument.Meter.Name == LaharsubDiagnostics.MeterName
                && instrument.Name is "laharsub.messages.published" or "laharsub.messages.delivered" or "laharsub.polls.active")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, _, _) =>
        {
            switch (instrument.Name)
            {
                case "laharsub.messages.published": Interlocked.Add(ref _published, value); break;
                case "laharsub.messages.delivered": Interlocked.Add(ref _delivered, value); break;
                default: Interlocked.Add(ref _activePolls, value); break;
            }
        });
        _listener.Start();
    }

    /// <summary>The page's JSON: counts now, limits, and the samples of the last minutes (oldest first).</summary>
    public async Task<AdminStats> SnapshotAsync(CancellationToken cancellationToken)
    {
        var store = await ReadStoreAsync().ConfigureAwait(false);
        AdminSample[] history;
        lock (_history)
        {
            history = [.. _history];
        }
        var latest = history.Length > 0 ? history[^1] : null;
        return new AdminStats(
            Now: _timeProvider.GetUtcNow(),
            StartedAt: _startedAt,
            Store: _store.GetType().Name,
            StoreReachable: store is not null,
            Topics: store?.TopicCount,
            MaxTopics: _limits.MaxTopics,
            RetainedBytes: store?.RetainedBytes,
            MaxRetainedBytes: _limits.MaxRetainedBytes,
            WaitingPolls: Interlocked.Read(ref _activePolls),
            MessagesPublished: Interlocked.Read(ref _published),
            MessagesDelivered: Interlocked.Read(ref _delivered),
            PublishesPerSecond: latest?.PublishesPerSecond ?? 0,
            DeliveriesPerSecond: latest?.DeliveriesPerSecond ?? 0,
            SampleIntervalSeconds: _options.SampleInterval.TotalSeconds,
            History: history);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(_options.SampleInterval, _timeProvider);
        var (published, delivered, at) = (Interlocked.Read(ref _published), Interlocked.Read(ref _delivered), _timeProvider.GetUtcNow());
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken).ConfigureAwait(false))
            {
                var store = await ReadStoreAsync().ConfigureAwait(false);
                var (nowPublished, nowDelivered, now) = (Interlocked.Read(ref _published), Interlocked.Read(ref _delivered), _timeProvider.GetUtcNow());
                var seconds = Math.Max((now - at).TotalSeconds, 0.001);
                var sample = new AdminSample(now, (nowPublished - published) / seconds, (nowDelivered - delivered) / seconds,
                    Interlocked.Read(ref _activePolls), store?.TopicCount, store?.RetainedBytes);
                (published, delivered, at) = (nowPublished, nowDelivered, now);
                lock (_history)
                {
                    if (_history.Count == HistoryLength)
                    {
                        _history.Dequeue();
                    }
                    _history.Enqueue(sample);
                }
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
    }

    public override void Dispose()
    {
        _listener.Dispose();
        base.Dispose();
    }

    /// <summary>The store's counts, or null while it cannot be reached (the page says so instead of failing).</summary>
    private async Task<StoreStatistics?> ReadStoreAsync()
    {
        try
        {
            return await _store.GetStatisticsAsync().ConfigureAwait(false);
        }
        catch (LaharsubStoreUnavailableException exception)
        {
            Log.StoreUnavailable(_logger, exception.Message);
            return null;
        }
    }
}

/// <summary>One sample of the admin chart.</summary>
internal sealed record AdminSample(DateTimeOffset At, double PublishesPerSecond, double DeliveriesPerSecond, long WaitingPolls, int? Topics, long? RetainedBytes);

/// <summary>The JSON of <c>/admin/stats</c>: store-wide counts (topics, bytes) and this instance's (polls, messages).</summary>
internal sealed record AdminStats(
    DateTimeOffset Now, DateTimeOffset StartedAt, string Store, bool StoreReachable,
    int? Topics, int MaxTopics, long? RetainedBytes, long MaxRetainedBytes,
    long WaitingPolls, long MessagesPublished, long MessagesDelivered,
    double PublishesPerSecond, double DeliveriesPerSecond, double SampleIntervalSeconds,
    IReadOnlyList<AdminSample> History);
