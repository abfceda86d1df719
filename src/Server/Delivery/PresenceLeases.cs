using System.Collections.Concurrent;
using Laharsub.Server.Storage;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Delivery;

/// <summary>
/// Takes and renews the presence leases of identified subscriptions, for every transport: the runner asks
/// for a <see cref="PresenceHold"/> when a run with an identity starts and ends it when the run ends. A
/// join found by a renewal is published here, by the instance whose renewal made it.
/// </summary>
/// <remarks>
/// Nothing happens for anonymous runs (the runner tests one reference). For identified ones, topics known
/// to have no presence are skipped by a lookup in <see cref="_hasPresence"/>; an unknown topic is learnt by
/// its first renewal, which the store answers with <see cref="PresenceStatus.NoPresence"/>. Renewals of one
/// member on one topic are taken at most once per renewal interval per instance, however many polls it makes,
/// so a member polling a busy topic many times a second costs the store one call per interval.
/// </remarks>
internal sealed partial class PresenceLeases
{
    // Bounds the topic cache, which keeps deleted topics' entries: cleared whole when it grows past this.
    private const int MaxCachedTopics = 200_000;

    private readonly IPresenceStore? _store;
    private readonly PresenceEvents _events;
    private readonly TimeProvider _clock;
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<long, bool> _hasPresence = new();
    private readonly ConcurrentDictionary<(long TopicId, string Member), long> _renewedAt = new();

    public PresenceLeases(ILaharsubStore store, PresenceEvents events, IOptions<LaharsubPresenceOptions> options, TimeProvider clock, ILogger<PresenceLeases> logger)
    {
        _store = store as IPresenceStore;
        _events = events;
        _clock = clock;
        _logger = logger;
        GracePeriod = options.Value.GracePeriod;
        RenewInterval = GracePeriod / 3;
    }

    public TimeSpan GracePeriod { get; }

    /// <summary>How often a held poll or open stream renews: a third of the grace period, so two renewals can fail before the lease runs out.</summary>
    public TimeSpan RenewInterval { get; }

    internal TimeProvider Clock => _clock;

    /// <summary>Starts holding the leases of <paramref name="identity"/> on those of the topics that may have presence; null when none may.</summary>
    public PresenceHold? Hold(ReadOnlySpan<Subscription> subscriptions, PresenceIdentity identity)
    {
        if (_store is null)
        {
            return null;
        }
        List<long>? topics = null;
        foreach (var subscription in subscriptions)
        {
            if (!_hasPresence.TryGetValue(subscription.TopicId, out var has) || has)
            {
                (topics ??= []).Add(subscription.TopicId);
            }
        }
        return topics is null ? null : PresenceHold.Start(this, [.. topics], identity);
    }

    /// <summary>Renews the leases of <paramref name="identity"/> on <paramref name="topics"/>, unless renewed here within <paramref name="unlessWithin"/>.</summary>
    internal async Task RenewAsync(long[] topics, PresenceIdentity identity, TimeSpan unlessWithin)
    {
        var now = _clock.GetUtcNow();
        foreach (var topicId in topics)
        {
            var key = (topicId, identity.Member);
            if (_renewedAt.TryGetValue(key, out var at) && now.UtcTicks - at < unlessWithin.Ticks)
            {
                continue;
            }
            _renewedAt[key] = now.UtcTicks;
            try
            {
                var renewal = await _store!.RenewAsync(topicId, identity.Member, identity.Data, now + GracePeriod).ConfigureAwait(false);
                switch (renewal.Status)
                {
                    case PresenceStatus.Done:
                        _hasPresence[topicId] = true;
                        if (renewal.Joined)
                        {
                            await _events.JoinedAsync(topicId, renewal, identity).ConfigureAwait(false);
                        }
                        break;
                    case PresenceStatus.NoPresence:
                        if (_hasPresence.Count > MaxCachedTopics)
                        {
                            _hasPresence.Clear();
                        }
                        _hasPresence[topicId] = false;
                        _renewedAt.TryRemove(key, out _);
                        break;
                    default:
                        _hasPresence.TryRemove(topicId, out _);
                        _renewedAt.TryRemove(key, out _);
                        break;
                }
            }
            catch (Exception exception) when (exception is not OutOfMemoryException)
            {
                // The next renewal tries again; a member whose renewals all fail leaves after the grace period.
                _renewedAt.TryRemove(key, out _);
                Log.RenewalFailed(_logger, exception, topicId);
            }
        }
    }

    /// <summary>Forgets renewal times older than the grace period (the sweeper calls it), so the map holds only current members.</summary>
    internal void ForgetStale()
    {
        var before = _clock.GetUtcNow().UtcTicks - GracePeriod.Ticks;
        foreach (var (key, at) in _renewedAt)
        {
            if (at < before)
            {
                _renewedAt.TryRemove(key, out _);
            }
        }
    }

    private static partial class Log
    {
        [LoggerMessage(EventId = 2601, Level = LogLevel.Warning, Message = "Renewing a presence lease on topic {TopicId} failed; the next renewal tries again")]
        public static partial void RenewalFailed(ILogger logger, Exception exception, long topicId);
    }
}

/// <summary>
/// The leases of one run: renewed at its start and every <see cref="PresenceLeases.RenewInterval"/> while
/// it runs, and once more when it ends, so that the member stays for the grace period from then.
/// </summary>
internal sealed class PresenceHold : IDisposable
{
    // A run that ends within this of a renewal does not renew again: a member's busy poll loop would
    // otherwise cost a store call per poll, for a lease that ends at most this much earlier.
    private static readonly TimeSpan ReleaseSkip = TimeSpan.FromSeconds(1);

    private readonly PresenceLeases _leases;
    private readonly long[] _topics;
    private readonly PresenceIdentity _identity;
    private readonly CancellationTokenSource _ended = new();

    private PresenceHold(PresenceLeases leases, long[] topics, PresenceIdentity identity)
    {
        _leases = leases;
        _topics = topics;
        _identity = identity;
    }

    /// <summary>Renews for as long as the hold lasts, in the background: the run never waits for the store.</summary>
    public Task Running { get; private set; } = Task.CompletedTask;

    public static PresenceHold Start(PresenceLeases leases, long[] topics, PresenceIdentity identity)
    {
        var hold = new PresenceHold(leases, topics, identity);
        hold.Running = hold.RunAsync();
        return hold;
    }

    private async Task RunAsync()
    {
        try
        {
            await _leases.RenewAsync(_topics, _identity, _leases.RenewInterval).ConfigureAwait(false);
            using var timer = new PeriodicTimer(_leases.RenewInterval, _leases.Clock);
            while (await timer.WaitForNextTickAsync(_ended.Token).ConfigureAwait(false))
            {
                await _leases.RenewAsync(_topics, _identity, TimeSpan.Zero).ConfigureAwait(false);
            }
        }
        catch (OperationCanceledException)
        {
            // Ended: the release below.
        }
        await _leases.RenewAsync(_topics, _identity, ReleaseSkip).ConfigureAwait(false);
        _ended.Dispose();
    }

    /// <summary>Ends the hold: one last renewal starts the grace period.</summary>
    public void Dispose()
    {
        try
        {
            _ended.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // Already ended.
        }
    }
}
