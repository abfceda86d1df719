namespace Laharsub.Server.Delivery;

/// <summary>
/// When a waiting subscription stops waiting with nothing: its interval passes on the host's
/// <see cref="TimeProvider"/> (a poll's timeout, a stream's heartbeat; tests move it with a fake clock
/// instead of waiting), its client goes away, or the server stops (<see cref="Ended"/> says which).
/// </summary>
/// <remarks>
/// Each cause wakes the poll's <see cref="PollWaiter"/> directly, as a publish does. The endpoint used
/// to link the three into one cancellation source that the waiter then registered on: a source, its
/// registration list and one more callback node per poll, which a waiting poll keeps for its whole wait
/// and the GC copies (docs/performance-history.md, "What pauses the server"). PollTimeoutBenchmarks compares them.
/// </remarks>
internal readonly struct SubscriptionWait
{
    private readonly TimeProvider _clock;
    private readonly long _started;

    public SubscriptionWait(TimeSpan timeout, TimeProvider clock, CancellationToken clientGone, CancellationToken stopping)
    {
        Timeout = timeout;
        _clock = clock;
        _started = clock.GetTimestamp();
        ClientGone = clientGone;
        Stopping = stopping;
    }

    /// <summary>No timeout; only <paramref name="released"/> ends the wait (in-process callers and tests).</summary>
    public static SubscriptionWait Until(CancellationToken released) =>
        new(System.Threading.Timeout.InfiniteTimeSpan, TimeProvider.System, released, CancellationToken.None);

    public TimeSpan Timeout { get; }

    /// <summary>The clock the wait's interval runs on, which a run's other holds (conflation, batching) use too.</summary>
    public TimeProvider Clock => _clock;
    public CancellationToken ClientGone { get; }
    public CancellationToken Stopping { get; }

    /// <summary>Why the wait is over, most pressing cause first; <see cref="WaitEnd.None"/> while it is not.</summary>
    public WaitEnd Ended =>
        ClientGone.IsCancellationRequested ? WaitEnd.ClientGone
        : Stopping.IsCancellationRequested ? WaitEnd.Stopping
        : !IsEndless && Remaining <= TimeSpan.Zero ? WaitEnd.TimedOut
        : WaitEnd.None;

    /// <summary>
    /// Whether the interval has passed, or so nearly that its timer, woken by a clock coarser than this
    /// one (Linux's timer ticks run up to a few milliseconds ahead of the precise clock), meant it to.
    /// </summary>
    public bool IsDue => !IsEndless && Remaining <= TimeSpan.FromTicks(Math.Min(TimerSlack.Ticks, Timeout.Ticks / 10));

    private static readonly TimeSpan TimerSlack = TimeSpan.FromMilliseconds(20);

    /// <summary>The same wait, its interval counted from now (a stream's next heartbeat).</summary>
    public SubscriptionWait Restarted() => new(Timeout, _clock, ClientGone, Stopping);

    private bool IsEndless => Timeout == System.Threading.Timeout.InfiniteTimeSpan;

    private TimeSpan Remaining => Timeout - _clock.GetElapsedTime(_started);

    /// <summary>Wakes <paramref name="waiter"/> on the first cause, until the result is disposed; <paramref name="timer"/> is the poll's own, reused.</summary>
    public Armed Arm(PollWaiter waiter, PollTimer timer)
    {
        if (!IsEndless)
        {
            var remaining = Remaining;
            timer.Start(_clock, remaining > TimeSpan.Zero ? remaining : TimeSpan.Zero);
        }
        return new Armed(IsEndless ? null : timer,
            ClientGone.UnsafeRegister(static state => ((PollWaiter)state!).Wake(), waiter),
            Stopping.UnsafeRegister(static state => ((PollWaiter)state!).Wake(), waiter));
    }

    /// <summary>
    /// As <see cref="Arm"/>, for a hold of <paramref name="dueTime"/> whatever the wait's own interval: the
    /// client going or the server stopping still ends it.
    /// </summary>
    public Armed ArmFor(PollWaiter waiter, PollTimer timer, TimeSpan dueTime)
    {
        timer.Start(Clock, dueTime);
        return new Armed(timer,
            ClientGone.UnsafeRegister(static state => ((PollWaiter)state!).Wake(), waiter),
            Stopping.UnsafeRegister(static state => ((PollWaiter)state!).Wake(), waiter));
    }

    /// <summary>
    /// The timer and registrations of one wait. Ending them before the poll moves on keeps most late causes
    /// from waking a later wait; the few that still do (a timer that fired as it was stopped) cost that wait a read.
    /// </summary>
    internal readonly struct Armed(PollTimer? timer, CancellationTokenRegistration clientGone, CancellationTokenRegistration stopping) : IDisposable
    {
        public void Dispose()
        {
            timer?.Stop();
            clientGone.Dispose();
            stopping.Dispose();
        }
    }
}

/// <summary>
/// A poll's timeout timer, made once and started again for each wait: a timer per wait would be
/// allocated for each one and kept for its whole wait, which the GC then copies (see <see cref="PollWaiter"/>).
/// </summary>
/// <remarks>
/// A timer stopped as it fires may still wake the waiter once more; the waiter tolerates such late wakes.
/// </remarks>
internal sealed class PollTimer(PollWaiter waiter) : IDisposable
{
    private ITimer? _timer;
    private TimeProvider? _clock;

    public void Start(TimeProvider clock, TimeSpan dueTime)
    {
        if (ReferenceEquals(_clock, clock))
        {
            _timer!.Change(dueTime, System.Threading.Timeout.InfiniteTimeSpan);
            return;
        }
        _timer?.Dispose();
        _clock = clock;
        _timer = clock.CreateTimer(static state => ((PollWaiter)state!).Wake(), waiter, dueTime, System.Threading.Timeout.InfiniteTimeSpan);
    }

    public void Stop() => _timer?.Change(System.Threading.Timeout.InfiniteTimeSpan, System.Threading.Timeout.InfiniteTimeSpan);

    public void Dispose()
    {
        _timer?.Dispose();
        _timer = null;
        _clock = null;
    }
}
