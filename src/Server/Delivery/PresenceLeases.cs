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

    // Runs listed since the last prune, beyond the runs kept then, after which a run's start prunes (besides
    // the sweeper's tick): bounds the ended runs listed when the sweeper is slow, at most two visits per run.
    internal const int MinListedBeforePrune = 16_384;

    private readonly IPresenceStore? _store;
    private readonly PresenceEvents _events;
    private readonly TimeProvider _clock;
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<long, bool> _hasPresence = new();
    private readonly ConcurrentDictionary<(long TopicId, string Member), MemberLease> _leases = new();
    // The runs holding leases, linked through the holds themselves: a run's start pushes it (one CAS), its end
    // only marks it, and PruneHeld unlinks ended runs. A dictionary's add and remove per poll, and its node
    // living as long as the poll, cost several times more.
    private PresenceHold? _heldHead;
    private int _listedSincePrune;
    private int _keptAtPrune;
    private int _pruning;
    private long _heldRenewedAt;
    private long _forgotAt;

    public PresenceLeases(ILaharsubStore store, PresenceEvents events, IOptions<LaharsubPresenceOptions> options, TimeProvider clock, ILogger<PresenceLeases> logger)
    {
        _store = store as IPresenceStore;
        _events = events;
        _clock = clock;
        _logger = logger;
        GracePeriod = options.Value.GracePeriod;
        RenewInterval = GracePeriod / 3;
        MaxMembersPerTopic = options.Value.MaxMembersPerTopic;
    }

    public TimeSpan GracePeriod { get; }

    /// <summary>The most members a topic has at once: a join beyond it is refused by the store, and the run with it.</summary>
    public int MaxMembersPerTopic { get; }

    private static readonly Task<long?> NoneRefused = Task.FromResult<long?>(null);

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
        var count = 0;
        foreach (var subscription in subscriptions)
        {
            if (MayHavePresence(subscription.TopicId))
            {
                count++;
            }
        }
        if (count == 0)
        {
            return null;
        }
        var leases = new MemberLease[count];
        count = 0;
        foreach (var subscription in subscriptions)
        {
            if (MayHavePresence(subscription.TopicId))
            {
                leases[count++] = _leases.GetOrAdd((subscription.TopicId, identity.Member), static key => new MemberLease(key.TopicId));
            }
        }
        // The first renewal is the run's admission: a join the topic has no room for refuses the run.
        var admission = RenewAsync(leases, identity, RenewInterval);
        var hold = new PresenceHold(this, leases, identity, _clock.GetUtcNow().UtcTicks, admission);
        List(hold);
        return hold;
    }

    /// <summary>How many runs the list holds, ended ones not yet pruned included (for tests).</summary>
    internal int CountListedRuns()
    {
        var count = 0;
        for (var hold = Volatile.Read(ref _heldHead); hold is not null; hold = hold.NextListed)
        {
            count++;
        }
        return count;
    }

    /// <summary>How many member leases are remembered (for tests).</summary>
    internal int CountLeases() => _leases.Count;

    private bool MayHavePresence(long topicId) => !_hasPresence.TryGetValue(topicId, out var has) || has;

    private void List(PresenceHold hold)
    {
        PresenceHold? head;
        do
        {
            head = Volatile.Read(ref _heldHead);
            hold.NextListed = head;
        }
        while (Interlocked.CompareExchange(ref _heldHead, hold, head) != head);
        if (Interlocked.Increment(ref _listedSincePrune) > Math.Max(MinListedBeforePrune, Volatile.Read(ref _keptAtPrune)))
        {
            PruneHeld(renewBefore: long.MinValue, TimeSpan.Zero);
        }
    }

    /// <summary>
    /// A run ended: renews once more, so the grace period counts from now, unless renewed within half a
    /// <see cref="RenewInterval"/>: a member's busy poll loop would otherwise cost a store call per poll, for a
    /// lease that ends at most that much earlier (a sixth of the grace period).
    /// </summary>
    internal void Release(PresenceHold hold) => _ = RenewAsync(hold.Leases, hold.Identity, RenewInterval / 2);

    /// <summary>
    /// Unlinks ended runs and renews the leases of every run still holding them (the sweeper calls it each
    /// tick): at most every half <see cref="RenewInterval"/>, each lease at most once per half interval, so a
    /// held member is renewed at least once per interval.
    /// </summary>
    internal async Task RenewHeldAsync()
    {
        var now = _clock.GetUtcNow().UtcTicks;
        var half = RenewInterval / 2;
        // Pruned when renewing, not every tick: the walk over every held run is most of a tick's cost, and the
        // ended runs it would free a little earlier are bounded by the prune at a run's start anyway.
        if (now - Volatile.Read(ref _heldRenewedAt) < half.Ticks)
        {
            return;
        }
        Volatile.Write(ref _heldRenewedAt, now);
        if (PruneHeld(now - half.Ticks, half) is { } pending)
        {
            await Task.WhenAll(pending).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Takes the list of runs, drops the ended ones, renews the live ones that started before
    /// <paramref name="renewBefore"/> (unless renewed within <paramref name="unlessWithin"/>) and puts them
    /// back; one pruner at a time (another caller returns at once).
    /// </summary>
    // Optimized at once: it runs every second, too rarely for tiering to reach it, over every held run.
    [MethodImpl(MethodImplOptions.AggressiveOptimization)]
    private List<Task>? PruneHeld(long renewBefore, TimeSpan unlessWithin)
    {
        if (Interlocked.Exchange(ref _pruning, 1) != 0)
        {
            return null;
        }
        // Started all at once, not one after another: on Redis each is a round trip, and the multiplexer pipelines them.
        List<Task>? pending = null;
        try
        {
            Volatile.Write(ref _listedSincePrune, 0);
            PresenceHold? kept = null, keptTail = null;
            var keptCount = 0;
            for (var hold = Interlocked.Exchange(ref _heldHead, null); hold is not null;)
            {
                var next = hold.NextListed;
                if (!hold.IsReleased)
                {
                    // A run that started within the half interval renewed then: most long polls end before they are looked at.
                    if (hold.StartedTicks < renewBefore && RenewAsync(hold.Leases, hold.Identity, unlessWithin) is { IsCompleted: false } renewal)
                    {
                        (pending ??= []).Add(renewal);
                    }
                    hold.NextListed = kept;
                    kept = hold;
                    keptTail ??= hold;
                    keptCount++;
                }
                hold = next;
            }
            Volatile.Write(ref _keptAtPrune, keptCount);
            if (keptTail is not null)
            {
                PresenceHold? head;
                do
                {
                    head = Volatile.Read(ref _heldHead);
                    keptTail.NextListed = head;
                }
                while (Interlocked.CompareExchange(ref _heldHead, kept, head) != head);
            }
        }
        finally
        {
            Volatile.Write(ref _pruning, 0);
        }
        return pending;
    }

    /// <summary>
    /// Renews <paramref name="leases"/> of <paramref name="identity"/>, but those renewed here within <paramref name="unlessWithin"/>;
    /// the first topic that refused the member for having <see cref="MaxMembersPerTopic"/> members already, or null.
    /// </summary>
    /// <remarks>Which leases are due is decided here, without a state machine: most calls renew nothing.</remarks>
    internal Task<long?> RenewAsync(MemberLease[] leases, PresenceIdentity identity, TimeSpan unlessWithin)
    {
        var now = _clock.GetUtcNow();
        List<MemberLease>? due = null;
        foreach (var lease in leases)
        {
            // Claimed by one caller: two polls of one member ending together renew once.
            var at = Volatile.Read(ref lease.RenewedTicks);
            if (now.UtcTicks - at < unlessWithin.Ticks || Interlocked.CompareExchange(ref lease.RenewedTicks, now.UtcTicks, at) != at)
            {
                continue;
            }
            (due ??= []).Add(lease);
        }
        return due is null ? NoneRefused : RenewDueAsync(due, identity, now);
    }

    private async Task<long?> RenewDueAsync(List<MemberLease> leases, PresenceIdentity identity, DateTimeOffset now)
    {
        long? refused = null;
        foreach (var lease in leases)
        {
            var topicId = lease.TopicId;
            try
            {
                var renewal = await _store!.RenewAsync(topicId, identity.Member, identity.Data, now + GracePeriod, MaxMembersPerTopic).ConfigureAwait(false);
                switch (renewal.Status)
                {
                    case PresenceStatus.Done:
                        _hasPresence[topicId] = true;
                        if (renewal.Joined)
                        {
                            await _events.JoinedAsync(topicId, renewal, identity).ConfigureAwait(false);
                        }
                        break;
                    case PresenceStatus.Full:
                        // Not a member, and nothing stored: the lease is forgotten, its claim (RenewedTicks) kept so that
                        // the refused run's release, right after, does not try the join again.
                        _hasPresence[topicId] = true;
                        _leases.TryRemove((topicId, identity.Member), out _);
                        refused ??= topicId;
                        break;
                    case PresenceStatus.NoPresence:
                        if (_hasPresence.Count > MaxCachedTopics)
                        {
                            _hasPresence.Clear();
                        }
                        _hasPresence[topicId] = false;
                        _leases.TryRemove((topicId, identity.Member), out _);
                        break;
                    default:
                        _hasPresence.TryRemove(topicId, out _);
                        _leases.TryRemove((topicId, identity.Member), out _);
                        break;
                }
            }
            catch (Exception exception) when (exception is not OutOfMemoryException)
            {
                // The next renewal tries again; a member whose renewals all fail leaves after the grace period.
                Volatile.Write(ref lease.RenewedTicks, 0);
                Log.RenewalFailed(_logger, exception, topicId);
            }
        }
        return refused;
    }

    /// <summary>
    /// Forgets leases not renewed within the grace period, so the map holds only current members: the sweeper
    /// calls it each tick, and it walks the map once per grace period (a lease goes within two of its last renewal).
    /// </summary>
    internal void ForgetStale()
    {
        var now = _clock.GetUtcNow().UtcTicks;
        if (now - Volatile.Read(ref _forgotAt) < GracePeriod.Ticks)
        {
            return;
        }
        Volatile.Write(ref _forgotAt, now);
        var before = now - GracePeriod.Ticks;
        foreach (var (key, lease) in _leases)
        {
            if (Volatile.Read(ref lease.RenewedTicks) < before)
            {
                _leases.TryRemove(key, out _);
            }
        }
    }
}

/// <summary>When this instance last renewed a member's lease on a topic: one per member and topic, shared by its runs.</summary>
internal sealed class MemberLease(long topicId)
{
    public readonly long TopicId = topicId;

    /// <summary>UTC ticks of the last renewal taken (0: never, or the last one failed).</summary>
    public long RenewedTicks;
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
internal sealed class PresenceHold(PresenceLeases leases, MemberLease[] memberLeases, PresenceIdentity identity, long startedTicks, Task<long?> admission) : IDisposable
{
    private int _released;

    /// <summary>The next run in the leases' list (written by whoever owns the list's chain at the time).</summary>
    internal PresenceHold? NextListed;

    /// <summary>When the run started (UTC ticks of the leases' clock), and renewed.</summary>
    public long StartedTicks => startedTicks;

    public MemberLease[] Leases => memberLeases;

    public PresenceIdentity Identity => identity;

    /// <summary>The run's first renewal: the topic that refused the member as full (the run is refused), or null.</summary>
    public Task<long?> Admission => admission;

    public bool IsReleased => Volatile.Read(ref _released) != 0;

    /// <summary>Ends the hold: one last renewal starts the grace period.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _released, 1) == 0)
        {
            leases.Release(this);
        }
    }
}
