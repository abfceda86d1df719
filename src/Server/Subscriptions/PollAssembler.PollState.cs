using System.Runtime.InteropServices;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Subscriptions;

internal sealed partial class PollAssembler
{
    /// <summary>
    /// One poll's working state, kept across the reads of a long poll so that each read reuses it: per
    /// subscription a <see cref="Slot"/> (cursor, followed epoch, what the topic took), and the batch
    /// read's requests and results, which the store takes as arrays.
    /// </summary>
    /// <remarks>
    /// A waiting poll lives seconds, longer than the GC's youngest generation, so everything here is
    /// copied by the GC once per poll: one array of slots instead of eight arrays keeps that small.
    /// </remarks>
    private sealed class PollState
    {
        private List<(int Slot, PollNotice Notice)>? _notices;

        public PollState(IReadOnlyList<Subscription> subscriptions)
        {
            Subscriptions = subscriptions;
            var count = subscriptions.Count;
            Slots = new Slot[count];
            for (var i = 0; i < count; i++)
            {
                // 0 marks a cursor not yet resolved: message ids start at 1.
                Slots[i].Cursor = subscriptions[i].From ?? 0;
            }
            Requests = new TopicReadRequest[count];
            Results = new TopicReadResult[count];
        }

        public IReadOnlyList<Subscription> Subscriptions { get; }

        /// <summary>A message's size in the answer's format, counted against <c>MaxBytesPerPoll</c>.</summary>
        public Func<Message, int>? AnswerBytes { get; init; }
        public int Count => Slots.Length;

        /// <summary>Each subscription's state, in subscription order.</summary>
        public Slot[] Slots { get; }

        public TopicReadRequest[] Requests { get; }
        public TopicReadResult[] Results { get; }
        public List<Message> Scratch { get; } = [];

        /// <summary>The topic that round one started from (not 0 only after a rotation).</summary>
        public int First { get; set; }

        public void ResetRound()
        {
            Scratch.Clear();
            foreach (ref var slot in Slots.AsSpan())
            {
                slot.Segment = default;
                slot.Extra = default;
                slot.Taken = 0;
                slot.Reread = false;
            }
            _notices?.Clear();
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
                Scratch.RemoveRange(Slots[0].Taken, Scratch.Count - Slots[0].Taken);
                Slots[0].Cursor = Scratch[^1].MessageId + 1;
                messages = Scratch;
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

        public CollectOutcome Outcome;
        public int Taken;

        /// <summary>Round one's messages for this topic.</summary>
        public Segment Segment;

        /// <summary>Round two's, when its share was full and the answer had room left.</summary>
        public Segment Extra;
    }
}
