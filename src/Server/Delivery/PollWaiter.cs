using System.Threading.Tasks.Sources;

namespace Laharsub.Server.Delivery;

/// <summary>
/// One waiting poll, registered in <see cref="TopicSignals"/> under each of its topics. The first
/// signal wakes it; it then leaves its other topics in O(1) each through their registrations.
/// </summary>
/// <remarks>
/// <para>
/// Reused from one wait to the next, and from one poll to the next (the runner pools it with the
/// poll's state): a waiting poll lives seconds, longer than the GC's youngest generation, so whatever it
/// allocates for its wait is copied by the next collection, and at 19,500 held polls those copies are the
/// server's longest pauses (docs/performance-history.md). A reused waiter is old and is not copied.
/// </para>
/// <para>
/// Reuse means a cause meant for an earlier wait (a signal walking a list it detached, a timer that fired
/// as it was stopped) can wake a later one. The poll reads again when woken and waits again when there is
/// nothing, so such a wake costs a read, never a message; and a closed waiter ignores wakes, so that
/// <see cref="Open"/> never races with one.
/// </para>
/// </remarks>
internal sealed class PollWaiter : IValueTaskSource
{
    // The state's low bits; the rest count the waits (Open), so that a wake's last step cannot touch a later wait.
    private const int Closed = 0, Waiting = 1, Waking = 2, Woken = 3, StateBits = 3;

    // Continuations run on the thread pool unless the wake asks otherwise (WakeInline), so a publisher
    // signalling thousands of waiters only queues work and never writes their responses itself.
    private ManualResetValueTaskSourceCore<bool> _core = new() { RunContinuationsAsynchronously = true };
    private int _state = Closed;

    /// <summary>
    /// A wake running the waiter's continuation on its own thread: the state it set and the thread, so that the
    /// continuation may close the wait being completed. Both, since the thread may be running a later wait's
    /// owner (a reused waiter) while it is still inside this wake.
    /// </summary>
    private long _inlineWake;

    // 1 once a topic has signalled this waiter since it last registered (Signal, SignalInline): its registrations
    // may be unlinked, so its wait cannot go on without registering again. See ReopenUnlessSignaled.
    private int _signaled;

    public PollWaiter(int topicCount)
    {
        Registrations = new Registration[topicCount];
        for (var i = 0; i < topicCount; i++)
        {
            Registrations[i] = new Registration(this);
        }
    }

    /// <summary>The waiter's node in each of its topics' lists, by subscription slot, reused from wait to wait.</summary>
    public Registration[] Registrations { get; }

    /// <summary>Starts a wait: from now on the first <see cref="Wake"/> completes <see cref="WaitAsync"/>.</summary>
    public void Open()
    {
        _core.Reset();
        _core.RunContinuationsAsynchronously = true;
        var next = (Volatile.Read(ref _state) & ~StateBits) + StateBits + 1;
        Volatile.Write(ref _state, next | Waiting);
    }

    /// <summary>Ends the wait, woken or not: later wakes are ignored until the next <see cref="Open"/>.</summary>
    public void Close()
    {
        // A wake that has begun completing finishes first, so that it cannot complete the next wait too
        // (a second completion of one wait would throw in the publisher's thread); unless this thread is that
        // wake's, running the continuation: the completion is done, and waiting for it would never end.
        var spinner = new SpinWait();
        while (true)
        {
            var state = Volatile.Read(ref _state);
            if ((state & StateBits) == Waking && Volatile.Read(ref _inlineWake) != InlineWake(state, Environment.CurrentManagedThreadId))
            {
                spinner.SpinOnce();
                continue;
            }
            if (Interlocked.CompareExchange(ref _state, state & ~StateBits, state) == state)
            {
                return;
            }
        }
    }

    /// <summary>Completes when woken; awaited at most once per <see cref="Open"/>.</summary>
    public ValueTask WaitAsync() => new(this, _core.Version);

    /// <summary>Wakes the wait; its continuation runs on the thread pool. For the wait's own causes (its timer, the client gone, stopping).</summary>
    public void Wake() => WakeCore(inline: false);

    /// <summary>A topic's signal (<see cref="TopicSignals"/>): marks the waiter signalled, then wakes it as <see cref="Wake"/> does.</summary>
    public void Signal()
    {
        // A full fence between the mark and WakeCore's read of the state, mirroring ReopenUnlessSignaled's.
        Interlocked.Exchange(ref _signaled, 1);
        WakeCore(inline: false);
    }

    /// <summary>A topic's signal, woken as <see cref="WakeInline"/> does.</summary>
    public void SignalInline()
    {
        Interlocked.Exchange(ref _signaled, 1);
        WakeCore(inline: true);
    }

    /// <summary>Whether a topic signalled since <see cref="ForgetSignals"/>.</summary>
    public bool WasSignaled => Volatile.Read(ref _signaled) != 0;

    /// <summary>Called before registering on the topics: from now on a topic's signal marks the waiter.</summary>
    public void ForgetSignals() => Volatile.Write(ref _signaled, 0);

    /// <summary>
    /// Ends the wait and starts another on the same registrations, unless a topic has signalled since they were
    /// made (then it returns false, and the caller registers again and reads). Without a signal every registration
    /// still stands, so nothing the wait follows has changed since it registered, and a quiet interval (a
    /// stream's heartbeat) costs no read.
    /// </summary>
    public bool ReopenUnlessSignaled()
    {
        Close();
        Open();
        // Waiting is published before the mark is read, as Signal marks before it reads the state: of a signal
        // racing this, either this sees its mark or its wake sees this wait.
        Interlocked.MemoryBarrier();
        return Volatile.Read(ref _signaled) == 0;
    }

    /// <summary>
    /// Wakes the wait and runs its continuation (the subscription's read and delivery, up to its next wait) on
    /// this thread, saving a thread-pool hop: for a caller that holds no lock and whose thread may write.
    /// </summary>
    public void WakeInline() => WakeCore(inline: true);

    private void WakeCore(bool inline)
    {
        var state = Volatile.Read(ref _state);
        var waking = (state & ~StateBits) | Waking;
        if ((state & StateBits) != Waiting || Interlocked.CompareExchange(ref _state, waking, state) != state)
        {
            return;
        }
        var mark = 0L;
        if (inline)
        {
            mark = InlineWake(waking, Environment.CurrentManagedThreadId);
            _core.RunContinuationsAsynchronously = false;
            Volatile.Write(ref _inlineWake, mark);
        }
        _core.SetResult(true);
        if (inline)
        {
            // Only this wake's mark: the continuation may have opened another wait that another thread now wakes.
            Interlocked.CompareExchange(ref _inlineWake, 0, mark);
        }
        // Only if this wait is still the one woken (an inline continuation may have closed it and opened the next).
        Interlocked.CompareExchange(ref _state, (state & ~StateBits) | Woken, waking);
    }

    private static long InlineWake(int state, int thread) => ((long)state << 32) | (uint)thread;

    void IValueTaskSource.GetResult(short token) => _core.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _core.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _core.OnCompleted(continuation, state, token, flags);

    /// <summary>A node of a topic's waiter list.</summary>
    internal sealed class Registration(PollWaiter waiter)
    {
        public PollWaiter Waiter { get; } = waiter;

        /// <summary>The topic whose list the node is in, or was last in (written before it is linked).</summary>
        public long TopicId;
        public Registration? Previous;
        public Registration? Next;

        /// <summary>Whether the node is still in its topic's list (written under the stripe's lock).</summary>
        public bool IsLinked;
    }
}
