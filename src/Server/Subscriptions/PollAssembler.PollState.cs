using System.Runtime.InteropServices;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Subscriptions;

internal sealed partial class PollAssembler
{
    /// <summary>
    /// One poll's working state, kept across the reads of a long poll so that each read reuses its
    /// arrays: cursors and followed epochs per subscription, the batch read's requests and results, and
    /// what each topic took.
    /// </summary>
    private sealed class PollState
    {
        private List<(int Slot, PollNotice Notice)>? _notices;

        public PollState(IReadOnlyList<Subscription> subscriptions)
        {
            Subscriptions = subscriptions;
            var count = subscriptions.Count;
            Cursors = new long[count];
            for (var i = 0; i < count; i++)
            {
                // 0 marks a cursor not yet resolved: message ids start at 1.
                Cursors[i] = subscriptions[i].From ?? 0;
            }
            Epochs = new string?[count];
            EpochChecked = new bool[count];
            Requests = new TopicReadRequest[count];
            Results = new TopicReadResult[count];
            Segments = new Segment[count];
            Extras = new Segment[count];
            Taken = new int[count];
            Outcomes = new CollectOutcome[count];
            RereadSlots = new bool[count];
        }

        public IReadOnlyList<Subscription> Subscriptions { get; }

        /// <summary>A message's size in the answer's format, counted against <c>MaxBytesPerPoll</c>.</summary>
        public Func<Message, int>? AnswerBytes { get; init; }
        public int Count => Cursors.Length;

        /// <summary>Each topic's cursor: where this read starts (0 until resolved for a subscription without one).</summary>
        public long[] Cursors { get; }

        /// <summary>The incarnation each topic had when this poll first read it; a later read of another one means it was deleted.</summary>
        public string?[] Epochs { get; }

        /// <summary>Whether the client's epoch was compared with the topic's (once per poll).</summary>
        public bool[] EpochChecked { get; }

        public TopicReadRequest[] Requests { get; }
        public TopicReadResult[] Results { get; }
        public List<Message> Scratch { get; } = [];
        public Segment[] Segments { get; }
        public Segment[] Extras { get; }
        public int[] Taken { get; }
        public CollectOutcome[] Outcomes { get; }
        public bool[] RereadSlots { get; }

        /// <summary>The topic that round one started from (not 0 only after a rotation).</summary>
        public int First { get; set; }

        public void ResetRound()
        {
            Scratch.Clear();
            Array.Clear(Segments);
            Array.Clear(Extras);
            Array.Clear(Taken);
            Array.Clear(RereadSlots);
            _notices?.Clear();
        }

        public void AddNotice(int slot, PollNotice notice) => (_notices ??= []).Add((slot, notice));

        /// <summary>Where a topic's cursor stands after round one.</summary>
        public long CursorAfterShare(int slot) =>
            Taken[slot] > 0 ? Segments[slot].Source![Segments[slot].Start + Taken[slot] - 1].MessageId + 1 : Cursors[slot];

        /// <summary>What was taken, topics in subscription order, and the cursors moved past it; null when nothing.</summary>
        public PollResult? ToResult()
        {
            List<Message>? messages = null;
            if (Count == 1 && Extras[0].Count == 0 && Taken[0] > 0 && Segments[0] is { Start: 0 } only && ReferenceEquals(only.Source, Scratch))
            {
                // The common one-topic answer: the read's own list becomes the answer's, trimmed to what was taken.
                Scratch.RemoveRange(Taken[0], Scratch.Count - Taken[0]);
                Cursors[0] = Scratch[^1].MessageId + 1;
                messages = Scratch;
            }
            else
            {
                for (var i = 0; i < Count; i++)
                {
                    var share = Segments[i];
                    var taken = Taken[i];
                    if (taken > 0)
                    {
                        messages ??= new List<Message>(Math.Max(taken, 4));
                        messages.AddRange(CollectionsMarshal.AsSpan(share.Source).Slice(share.Start, taken));
                        Cursors[i] = share.Source![share.Start + taken - 1].MessageId + 1;
                    }
                    var extra = Extras[i];
                    if (extra.Count > 0)
                    {
                        messages ??= [];
                        messages.AddRange(CollectionsMarshal.AsSpan(extra.Source).Slice(extra.Start, extra.Count));
                        Cursors[i] = extra.Source![extra.Start + extra.Count - 1].MessageId + 1;
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
}
