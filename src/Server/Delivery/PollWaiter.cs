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
/// server's longest pauses (docs/performance.md). A reused waiter is old and is not copied.
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
    private const int Closed = 0, Waiting = 1, Waking = 2, Woken = 3;

    // Continuations run on the thread pool, so a publisher signalling thousands of waiters only queues
    // work and never writes a poll's response inline.
    private ManualResetValueTaskSourceCore<bool> _core = new() { RunContinuationsAsynchronously = true };
    private int _state = Closed;

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
        Volatile.Write(ref _state, Waiting);
    }

    /// <summary>Ends the wait, woken or not: later wakes are ignored until the next <see cref="Open"/>.</summary>
    public void Close()
    {
        // A wake that has begun completing finishes first, so that it cannot complete the next wait too
        // (a second completion of one wait would throw in the publisher's thread).
        var spinner = new SpinWait();
        while (true)
        {
            var state = Volatile.Read(ref _state);
            if (state != Waking && Interlocked.CompareExchange(ref _state, Closed, state) == state)
            {
                return;
            }
            spinner.SpinOnce();
        }
    }

    /// <summary>Completes when woken; awaited at most once per <see cref="Open"/>.</summary>
    public ValueTask WaitAsync() => new(this, _core.Version);

    public void Wake()
    {
        if (Interlocked.CompareExchange(ref _state, Waking, Waiting) == Waiting)
        {
            _core.SetResult(true);
            Volatile.Write(ref _state, Woken);
        }
    }

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
