using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Delivery;

internal sealed partial class SubscriptionRunner
{
    /// <summary>
    /// One run's working state, kept across the reads of a long poll or a stream so that each read reuses
    /// it: per subscription a <see cref="Slot"/> (cursor, followed epoch, what the topic took), the batch
    /// read's requests and results (which the store takes as arrays), the run's waiter and its timer.
    /// </summary>
    /// <remarks>
    /// A waiting poll lives seconds, longer than the GC's youngest generation, so whatever it allocates for
    /// its wait is copied by the next collection; at 19,500 held polls those collections are the server's
    /// longest pauses (docs/performance-history.md). So the state is pooled (<see cref="RunStatePool"/>): a reused
    /// state is old and is not copied. It also keeps no reference to a young object while the poll waits
    /// (it copies the subscriptions, drops the request's epoch strings after the first read, and answers
    /// with a copy of its message list): the GC finds young objects that old ones refer to by scanning the
    /// old ones, and that scan, not the copying, was most of a pause (docs/performance-history.md, "What pauses the
    /// server", has the measurements).
    /// </remarks>
    private sealed class RunState : IDisposable
    {
        private List<(int Slot, PollNotice Notice)>? _notices;

        public RunState(int count)
        {
            Subscriptions = new Subscription[count];
            Slots = new Slot[count];
            Requests = new TopicReadRequest[count];
            Results = new TopicReadResult[count];
            Waiter = new PollWaiter(count);
            Timer = new PollTimer(Waiter);
        }

        /// <summary>The poll's subscriptions, copied: the request's own list is young, and this state old (remarks).</summary>
        public Subscription[] Subscriptions { get; }

        /// <summary>A message's size in the answer's format, counted against <c>MaxBytesPerPoll</c>.</summary>
        public Func<Message, int>? AnswerBytes { get; private set; }
        public int Count => Slots.Length;

        /// <summary>Each subscription's state, in subscription order.</summary>
        public Slot[] Slots { get; }

        public TopicReadRequest[] Requests { get; }
        public TopicReadResult[] Results { get; }
        public List<Message> Scratch { get; } = [];
        public PollWaiter Waiter { get; }
        public PollTimer Timer { get; }

        /// <summary>The topic that round one started from (not 0 only after a rotation).</summary>
        public int First { get; set; }

        /// <summary>What the subscriber conflates and how deliveries are spaced; default for most runs.</summary>
        public Pacing Pacing { get; private set; }

        /// <summary>Takes the state for a poll of <see cref="Count"/> subscriptions.</summary>
        public void Start(ReadOnlySpan<Subscription> subscriptions, Func<Message, int>? answerBytes, Pacing pacing)
        {
            AnswerBytes = answerBytes;
            Pacing = pacing;
            First = 0;
            for (var i = 0; i < Slots.Length; i++)
            {
                // 0 marks a cursor not yet resolved: message ids start at 1.
                Subscriptions[i] = subscriptions[i];
                Slots[i] = new Slot { Cursor = subscriptions[i].From ?? 0, WantsDocument = subscriptions[i].State };
            }
        }

        /// <summary>Lets go of everything the poll referred to, so that a pooled state keeps no messages or epochs alive.</summary>
        public void Clear()
        {
            AnswerBytes = null;
            Pacing = default;
            Array.Clear(Subscriptions);
            Array.Clear(Slots);
            Array.Clear(Requests);
            Array.Clear(Results);
            Scratch.Clear();
            _notices?.Clear();
        }

        public void Dispose() => Timer.Dispose();

        public void ResetRound()
        {
            Scratch.Clear();
            foreach (ref var slot in Slots.AsSpan())
            {
                slot.Segment = default;
                slot.Extra = default;
                slot.Taken = 0;
                slot.Reread = false;
                slot.Conflated = false;
            }
            _notices?.Clear();
        }

        /// <summary>
        /// After the first read, where each subscription stands for a client that resumes: what it
        /// <paramref name="requested"/>, a missing cursor resolved to the topic's next message and a missing
        /// epoch to the topic's. A read that found the topic gone leaves the request as it was.
        /// </summary>
        public Subscription[] Positions(Subscription[] requested)
        {
            for (var i = 0; i < requested.Length; i++)
            {
                ref readonly var slot = ref Slots[i];
                var asked = requested[i];
                requested[i] = asked with
                {
                    From = asked.From ?? (slot.Cursor > 0 ? slot.Cursor : null),
                    Epoch = asked.Epoch ?? slot.Epoch,
                    // Resolved once the document came: a resume reads on from its version.
                    State = asked.State && slot.WantsDocument,
                };
            }
            return requested;
        }

        public void AddNotice(int slot, PollNotice notice) => (_notices ??= []).Add((slot, notice));

        /// <summary>Where a topic's cursor stands after round one.</summary>
        public long CursorAfterShare(int index)
        {
            ref var slot = ref Slots[index];
            return slot.Taken > 0 ? slot.Segment.Source![slot.Segment.Start + slot.Taken - 1].MessageId + 1 : slot.Cursor;
        }

        /// <summary>What was taken, topics in subscription order, and the cursors moved past it; null when nothing.</summary>
        public PollResult? ToResult()
        {
            List<Message>? messages = null;
            if (Count == 1 && Slots[0] is { Extra.Count: 0, Taken: > 0, Segment: { Start: 0 } only } && ReferenceEquals(only.Source, Scratch))
            {
                // The common one-topic answer: the read's own list becomes the answer's, trimmed to what was taken.
                // A copy: the pooled state keeps its own list, which a young list in its place would make
                // one more object for the GC to find through an old one (remarks).
                messages = Scratch.GetRange(0, Slots[0].Taken);
                Slots[0].Cursor = messages[^1].MessageId + 1;
            }
            else
            {
                foreach (ref var slot in Slots.AsSpan())
                {
                    var share = slot.Segment;
                    var taken = slot.Taken;
                    if (taken > 0)
                    {
                        messages ??= new List<Message>(Math.Max(taken, 4));
                        messages.AddRange(CollectionsMarshal.AsSpan(share.Source).Slice(share.Start, taken));
                        slot.Cursor = share.Source![share.Start + taken - 1].MessageId + 1;
                    }
                    var extra = slot.Extra;
                    if (extra.Count > 0)
                    {
                        messages ??= [];
                        messages.AddRange(CollectionsMarshal.AsSpan(extra.Source).Slice(extra.Start, extra.Count));
                        slot.Cursor = extra.Source![extra.Start + extra.Count - 1].MessageId + 1;
                    }
                }
            }
            if (_notices is not { Count: > 0 } && messages is null)
            {
                return null;
            }
            List<PollNotice>? notices = null;
            if (_notices is { Count: > 0 })
            {
                // Notices in subscription order; stable, so a topic's own notices keep their order.
                notices = [.. _notices.OrderBy(entry => entry.Slot).Select(entry => entry.Notice)];
            }
            return new PollResult(notices, messages, unknownTopicId: null);
        }
    }

    /// <summary>One subscription of a poll: where it reads from, and what this round took.</summary>
    private struct Slot
    {
        /// <summary>Where the next read starts (0 until resolved for a subscription without a cursor).</summary>
        public long Cursor;

        /// <summary>
        /// The incarnation the topic had when this poll first read it (null before), against which a later
        /// read tells a deletion; the client's own epoch is compared at that first read only.
        /// </summary>
        public string? Epoch;

        /// <summary>Whether a reset moved the cursor and the topic must be read again from there.</summary>
        public bool Reread;

        /// <summary>
        /// Whether the next read takes the state topic's document (a <c>state</c> notice) instead of messages: asked
        /// with the cursor <c>state</c>, or in place of a gap or after a reset of a state topic.
        /// </summary>
        public bool WantsDocument;

        /// <summary>Whether the topic was deleted and the subscriber told: a stream reads on without it.</summary>
        public bool Deleted;

        /// <summary>Whether this round skipped to the topic's latest message: it takes that one only.</summary>
        public bool Conflated;

        public CollectOutcome Outcome;
        public int Taken;

        /// <summary>Round one's messages for this topic.</summary>
        public Segment Segment;

        /// <summary>Round two's, when its share was full and the answer had room left.</summary>
        public Segment Extra;
    }

    /// <summary>
    /// Poll states for reuse, by subscription count (the common small polls only). Bounded: after a burst
    /// of polls the pool keeps at most <see cref="MaxRetainedPerCount"/> states of each count.
    /// </summary>
    private sealed class RunStatePool
    {
        private const int MaxPooledCount = 8;
        private const int MaxRetainedPerCount = 4096;
        private readonly ConcurrentQueue<RunState>[] _free = new ConcurrentQueue<RunState>[MaxPooledCount + 1];
        private readonly int[] _retained = new int[MaxPooledCount + 1];

        public RunStatePool()
        {
            for (var i = 0; i < _free.Length; i++)
            {
                _free[i] = new ConcurrentQueue<RunState>();
            }
        }

        public RunState Rent(ReadOnlySpan<Subscription> subscriptions, Func<Message, int>? answerBytes, Pacing pacing)
        {
            var count = subscriptions.Length;
            RunState? state = null;
            if (count <= MaxPooledCount && _free[count].TryDequeue(out state))
            {
                Interlocked.Decrement(ref _retained[count]);
            }
            state ??= new RunState(count);
            state.Start(subscriptions, answerBytes, pacing);
            return state;
        }

        public void Return(RunState state)
        {
            state.Clear();
            var count = state.Count;
            if (count <= MaxPooledCount)
            {
                if (Interlocked.Increment(ref _retained[count]) <= MaxRetainedPerCount)
                {
                    _free[count].Enqueue(state);
                    return;
                }
                Interlocked.Decrement(ref _retained[count]);
            }
            state.Dispose();
        }
    }
}
