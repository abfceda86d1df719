using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
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
    private readonly ConcurrentDictionary<PresenceHold, byte> _held = new(ReferenceEqualityComparer.Instance);
    private long _heldRenewedAt;


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
        if (topics is null)
        {
            return null;
        }
        var hold = new PresenceHold(this, [.. topics], identity, _clock.GetUtcNow().UtcTicks);
        _held.TryAdd(hold, 0);
        _ = RenewAsync(hold.Topics, identity, RenewInterval);
        return hold;
    }

    /// <summary>
    /// A run ended: renews once more, so the grace period counts from now, unless renewed within half a
    /// <see cref="RenewInterval"/>: a member's busy poll loop would otherwise cost a store call per poll, for a
    /// lease that ends at most that much earlier (a sixth of the grace period).
    /// </summary>
    internal void Release(PresenceHold hold)
    {
        _held.TryRemove(hold, out _);
        _ = RenewAsync(hold.Topics, hold.Identity, RenewInterval / 2);
    }

    /// <summary>
    /// Renews the leases of every run still holding them (the sweeper calls it each tick): at most every half
    /// <see cref="RenewInterval"/>, each lease at most once per half interval, so a held member is renewed at
    /// least once per interval.
    /// </summary>
    internal async Task RenewHeldAsync()
    {
        var now = _clock.GetUtcNow().UtcTicks;
        var half = RenewInterval / 2;
        if (now - Volatile.Read(ref _heldRenewedAt) < half.Ticks)
        {
            return;
        }
        Volatile.Write(ref _heldRenewedAt, now);
        if (RenewHeld(now - half.Ticks, half) is { } pending)
        {
            await Task.WhenAll(pending).ConfigureAwait(false);
        }
    }

    // Optimized at once: it runs every few seconds, too rarely for tiering to reach it, over every held run.
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private List<Task>? RenewHeld(long startedBefore, TimeSpan unlessWithin)
    {
        // Started all at once, not one after another: on Redis each is a round trip, and the multiplexer pipelines them.
        List<Task>? pending = null;
        foreach (var (hold, _) in _held)
        {
            // A run that started within the half interval renewed then: most long polls end before they are looked at.
            if (hold.StartedTicks >= startedBefore)
            {
                continue;
            }
            var renewal = RenewAsync(hold.Topics, hold.Identity, unlessWithin);
            if (!renewal.IsCompleted)
            {
                (pending ??= []).Add(renewal);
            }
        }
        return pending;
    }

    /// <summary>Renews the leases of <paramref name="identity"/> on <paramref name="topics"/>, unless renewed here within <paramref name="unlessWithin"/>.</summary>
    /// <remarks>Which leases are due is decided here, without a state machine: most calls renew nothing.</remarks>
    internal Task RenewAsync(long[] topics, PresenceIdentity identity, TimeSpan unlessWithin)
    {
        var now = _clock.GetUtcNow();
        List<long>? due = null;
        foreach (var topicId in topics)
        {
            var key = (topicId, identity.Member);
            if (_renewedAt.TryGetValue(key, out var at) && now.UtcTicks - at < unlessWithin.Ticks)
            {
                continue;
            }
            _renewedAt[key] = now.UtcTicks;
            (due ??= []).Add(topicId);
        }
        return due is null ? Task.CompletedTask : RenewDueAsync(due, identity, now);
    }

    private async Task RenewDueAsync(List<long> topics, PresenceIdentity identity, DateTimeOffset now)
    {
        foreach (var topicId in topics)
        {
            var key = (topicId, identity.Member);
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
/// The leases of one run, from its start to its end: renewed at the start, by <see cref="PresenceLeases.RenewHeldAsync"/>
/// while it runs, and once more when it ends (<see cref="Dispose"/>), so that the member stays for the grace period from then.
/// </summary>
/// <remarks>
/// It holds no timer or cancellation source of its own: a long poll is a run, and thousands of them a second each
/// cancelling a timer cost more than everything else a poll does (a cancelled timer's wait throws, and the exception
/// captures its stack trace as text).
/// </remarks>
internal sealed class PresenceHold(PresenceLeases leases, long[] topics, PresenceIdentity identity, long startedTicks) : IDisposable
{
    private int _released;

    /// <summary>When the run started (UTC ticks of the leases' clock), and renewed.</summary>
    public long StartedTicks => startedTicks;

    public long[] Topics => topics;

    public PresenceIdentity Identity => identity;

    /// <summary>Ends the hold: one last renewal starts the grace period.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _released, 1) == 0)
        {
            leases.Release(this);
        }
    }
}
