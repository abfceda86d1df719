using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Delivery;

/// <summary>
/// This process's waiting subscriptions, by topic: the <see cref="ITopicSignals"/> every store calls
/// whenever a topic changes (a publish or a delete, made here or learned from another instance), and
/// every subscription waiting on it here wakes and reads again. One per process, shared by every store,
/// so that waking is the same code whatever keeps the messages.
/// </summary>
/// <remarks>
/// The waiters of a topic are an intrusive doubly-linked list, so a poll leaves each of its topics in
/// O(1). The lists live in striped dictionaries, each stripe under its own lock: no lock is wider than
/// a stripe, and a publish holds one only to detach the list, waking the polls after releasing it.
/// </remarks>
internal sealed class TopicSignals : ITopicSignals
{
    private const int StripeCount = 64;
    private readonly Stripe[] _stripes = new Stripe[StripeCount];

    /// <summary>Creates an empty registry.</summary>
    public TopicSignals()
    {
        for (var i = 0; i < _stripes.Length; i++)
        {
            _stripes[i] = new Stripe();
        }
    }

    /// <summary>
    /// How many of a publish's woken subscriptions its own thread answers (<see cref="SignalFromPublisher"/>):
    /// enough for a chat room's few, few enough that a broadcast's publisher hands nearly all of its
    /// subscribers to the thread pool, which answers them in parallel.
    /// </summary>
    internal const int InlineWakes = 4;

    /// <summary>Wakes every poll of this process that waits on <paramref name="topicId"/>.</summary>
    public void Signal(long topicId) => Signal(topicId, inlineWakes: 0);

    /// <summary>
    /// As <see cref="Signal(long)"/>, from the publisher's thread, which holds no lock: the last
    /// <see cref="InlineWakes"/> woken subscriptions read and deliver on this thread, without a thread-pool
    /// hop each, after the others have been queued to the pool.
    /// </summary>
    public void SignalFromPublisher(long topicId)
    {
        // Not within another publish's inline deliveries (a woken connection that went on to a publish it had
        // already received): one level keeps the publisher's stack and latency bounded.
        if (t_inlineDepth > 0)
        {
            Signal(topicId, inlineWakes: 0);
            return;
        }
        t_inlineDepth++;
        try
        {
            Signal(topicId, InlineWakes);
        }
        finally
        {
            t_inlineDepth--;
        }
    }

    [ThreadStatic]
    private static int t_inlineDepth;

    private void Signal(long topicId, int inlineWakes)
    {
        var stripe = StripeOf(topicId);
        PollWaiter[] woken;
        int count;
        lock (stripe.Lock)
        {
            if (!stripe.Waiters.Remove(topicId, out var waiters))
            {
                return;
            }
            // The nodes belong to their waiters, which reuse them as soon as they are unlinked: the list is
            // copied and unlinked under the lock, and only the copy is used after it.
            woken = ArrayPool<PollWaiter>.Shared.Rent(waiters.Count);
            count = 0;
            for (var node = waiters.First; node is not null;)
            {
                var next = node.Next;
                woken[count++] = node.Waiter;
                node.Previous = node.Next = null;
                node.IsLinked = false;
                node = next;
            }
        }
        var queued = Math.Max(0, count - inlineWakes);
        foreach (var waiter in woken.AsSpan(0, queued))
        {
            waiter.Signal();
        }
        foreach (var waiter in woken.AsSpan(queued, count - queued))
        {
            waiter.SignalInline();
        }
        ArrayPool<PollWaiter>.Shared.Return(woken, clearArray: true);
    }

    /// <summary>Wakes every waiting poll of this process (a store that lost track of changes, for example after reconnecting).</summary>
    public void SignalAll()
    {
        foreach (var stripe in _stripes)
        {
            long[] topics;
            lock (stripe.Lock)
            {
                topics = [.. stripe.Waiters.Keys];
            }
            foreach (var topicId in topics)
            {
                Signal(topicId);
            }
        }
    }

    /// <summary>Polls of this process waiting on <paramref name="topicId"/> now.</summary>
    public int WaitingOn(long topicId)
    {
        var stripe = StripeOf(topicId);
        lock (stripe.Lock)
        {
            return stripe.Waiters.TryGetValue(topicId, out var waiters) ? waiters.Count : 0;
        }
    }

    internal void Register(PollWaiter waiter, int slot, long topicId)
    {
        var registration = waiter.Registrations[slot];
        registration.TopicId = topicId;
        var stripe = StripeOf(topicId);
        lock (stripe.Lock)
        {
            ref var waiters = ref CollectionsMarshal.GetValueRefOrAddDefault(stripe.Waiters, topicId, out _);
            registration.Previous = null;
            registration.Next = waiters.First;
            if (waiters.First is not null)
            {
                waiters.First.Previous = registration;
            }
            waiters.First = registration;
            waiters.Count++;
            registration.IsLinked = true;
        }
    }

    internal void Unregister(PollWaiter.Registration registration)
    {
        // A signal unlinks every waiter it wakes, so the woken poll usually skips the lock here.
        if (!Volatile.Read(ref registration.IsLinked))
        {
            return;
        }
        var stripe = StripeOf(registration.TopicId);
        lock (stripe.Lock)
        {
            if (!registration.IsLinked)
            {
                return;
            }
            ref var waiters = ref CollectionsMarshal.GetValueRefOrNullRef(stripe.Waiters, registration.TopicId);
            if (Unsafe.IsNullRef(ref waiters))
            {
                return;
            }
            if (registration.Previous is null)
            {
                waiters.First = registration.Next;
            }
            else
            {
                registration.Previous.Next = registration.Next;
            }
            if (registration.Next is not null)
            {
                registration.Next.Previous = registration.Previous;
            }
            registration.Previous = registration.Next = null;
            registration.IsLinked = false;
            if (--waiters.Count == 0)
            {
                stripe.Waiters.Remove(registration.TopicId);
            }
        }
    }

    private Stripe StripeOf(long topicId) => _stripes[(int)((ulong)topicId % StripeCount)];

    private sealed class Stripe
    {
        public readonly Lock Lock = new();
        public readonly Dictionary<long, TopicWaiters> Waiters = [];
    }

    /// <summary>
    /// A topic's list, held by value in its stripe's dictionary: an object per list would be made each time
    /// a topic gains its first waiter again, and be kept (and copied by the GC) while polls wait.
    /// </summary>
    private struct TopicWaiters
    {
        public PollWaiter.Registration? First;
        public int Count;
    }
}
