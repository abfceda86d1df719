using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Delivery;

/// <summary>
/// Runs a subscription from any <see cref="ILaharsubStore"/>, for every transport: reads the topics from
/// their cursors, turns cursors and epochs into notices (gap, reset, topicDeleted), shares a capped
/// delivery fairly between topics, hands it to the transport's <see cref="ISubscriptionSink"/>, and waits
/// on <see cref="TopicSignals"/> when there is nothing yet; then again, for as long as the sink goes on.
/// Every store and every transport get the same semantics because this code, not they, decides them.
/// </summary>
internal sealed partial class SubscriptionRunner(ILaharsubStore store, TopicSignals signals, IOptions<LaharsubDeliveryOptions> options,
    PresenceLeases? presence = null)
{
    private readonly LaharsubDeliveryOptions _options = options.Value;
    private readonly RunStatePool _pool = new();
    private uint _rotation;

    /// <summary>
    /// One delivery, as a long poll gets it: what the subscriptions can read now; if nothing, waits until a
    /// message or notice arrives on any of them or <paramref name="wait"/> is over (then the result is empty).
    /// For in-process callers, tests and benchmarks.
    /// </summary>
    /// <param name="subscriptions">The topics, cursors and epochs.</param>
    /// <param name="answerBytes">
    /// What a message adds to a delivery in the transport's format, so that <c>MaxBytesPerPoll</c> bounds
    /// what is written, not only the bodies; null counts bodies.
    /// </param>
    /// <param name="wait">When to stop waiting: the timeout, the client gone, the server stopping.</param>
    public async ValueTask<PollResult> PollAsync(IReadOnlyList<Subscription> subscriptions, Func<Message, int>? answerBytes, SubscriptionWait wait)
    {
        var taken = new FirstResult(new StrongBox<PollResult>(PollResult.Empty));
        await RunAsync(AsSpan(subscriptions), answerBytes, wait, taken).ConfigureAwait(false);
        return taken.Result.Value!;
    }

    private static ReadOnlySpan<Subscription> AsSpan(IReadOnlyList<Subscription> subscriptions) => subscriptions switch
    {
        Subscription[] array => array,
        List<Subscription> list => CollectionsMarshal.AsSpan(list),
        _ => subscriptions.ToArray(),
    };

    /// <summary>
    /// Runs the subscriptions until <paramref name="sink"/> stops: read from the cursors, apply the rules,
    /// deliver to the sink, or wait for a signal or the end of <paramref name="wait"/>; repeat. The sink
    /// runs in this same state machine. The subscriptions are copied before this returns, so the caller
    /// may reuse their memory.
    /// </summary>
    /// <param name="subscriptions">The topics, cursors and epochs.</param>
    /// <param name="answerBytes">What a message adds to a delivery in the transport's format.</param>
    /// <param name="wait">When to stop waiting.</param>
    /// <param name="sink">The transport.</param>
    /// <param name="pacing">Conflation and batching; the default paces nothing.</param>
    /// <param name="member">Who the subscriber is for presence; null for an anonymous observer, which costs presence nothing.</param>
    public Task RunAsync<TSink>(ReadOnlySpan<Subscription> subscriptions, Func<Message, int>? answerBytes, SubscriptionWait wait, TSink sink,
        Pacing pacing = default, PresenceIdentity? member = null)
        where TSink : struct, ISubscriptionSink
    {
        // The state copies them: the request's subscription list and epoch strings are young, and the state
        // machine, which a waiting subscription keeps, holds only what its wait needs.
        var hold = member is null ? null : presence?.Hold(subscriptions, member);
        return RunAsync(_pool.Rent(subscriptions, answerBytes, pacing), wait, sink, hold);
    }

    // hold: the member's presence leases, held for as long as the run lasts (on every transport); releasing it starts the grace period.
    private async Task RunAsync<TSink>(RunState run, SubscriptionWait wait, TSink sink, PresenceHold? hold)
        where TSink : struct, ISubscriptionSink
    {
        // Registered before the first read: a change that the read misses signals the waiter.
        Register(run);
        var registered = true;
        var inSink = false;
        // Copied before the first read lets go of the request's epochs (RunState's remarks).
        var requested = sink.WantsPositions ? run.Subscriptions.ToArray() : null;
        // One test of a field the run has anyway: a run that paces nothing takes none of the branches below.
        var paced = run.Pacing.HoldsDeliveries;
        var notBefore = paced && run.Pacing.IntervalFromStart ? wait.Clock.GetTimestamp() + IntervalTicks(run, wait) : 0;
        try
        {
            if (hold is not null && await hold.Admission.ConfigureAwait(false) is { } full)
            {
                inSink = true;
                await sink.DeliverAsync(PollResult.PresenceFull(full)).ConfigureAwait(false);
                return;
            }
            while (true)
            {
                if (paced && notBefore > 0 && wait.Clock.GetTimestamp() < notBefore)
                {
                    // Not yet: the conflation interval since the last delivery (or a poll's arrival) runs on.
                    // Held with its topics left, so that a publish meanwhile does not wake it; what is
                    // published meanwhile is read, latest only, when the hold ends.
                    if (registered)
                    {
                        Unregister(run);
                    }
                    await HoldAsync(run, wait, notBefore).ConfigureAwait(false);
                    Register(run);
                    registered = true;
                }
                var result = await CollectAsync(run).ConfigureAwait(false);
                if (requested is not null && result?.RefusedTopicId is null)
                {
                    inSink = true;
                    if (!await sink.PositionedAsync(run.Positions(requested)).ConfigureAwait(false))
                    {
                        return;
                    }
                    inSink = false;
                    requested = null;
                }
                if (result is null && wait.Ended == WaitEnd.None)
                {
                    while (true)
                    {
                        using (wait.Arm(run.Waiter, run.Timer))
                        {
                            await run.Waiter.WaitAsync().ConfigureAwait(false);
                        }
                        // A quiet interval: no topic signalled, so nothing changed since the last read and every
                        // registration stands. The sink ends the poll (204) or writes a heartbeat without a read, and
                        // a stream waits on, registered; on Redis a read is a script, and idle streams' heartbeats were most of them.
                        if (wait.Ended is not (WaitEnd.TimedOut or WaitEnd.None) || !wait.IsDue || run.Waiter.WasSignaled)
                        {
                            break;
                        }
                        inSink = true;
                        if (!await sink.WaitEndedAsync(WaitEnd.TimedOut).ConfigureAwait(false))
                        {
                            return;
                        }
                        inSink = false;
                        wait = wait.Restarted();
                        if (!run.Waiter.ReopenUnlessSignaled())
                        {
                            break;
                        }
                    }
                    Unregister(run);
                    registered = false;
                    if (paced && run.Pacing.BatchWindow > TimeSpan.Zero && wait.Ended == WaitEnd.None)
                    {
                        // Woken by the first of a burst: what else arrives within the window goes out in the same write.
                        await HoldAsync(run, wait, wait.Clock.GetTimestamp() + (long)(run.Pacing.BatchWindow.TotalSeconds * wait.Clock.TimestampFrequency))
                            .ConfigureAwait(false);
                    }
                    // Woken: usually by what it waits for, so read before registering again; a poll that is
                    // answered now leaves its topics once, not twice.
                    result = await CollectAsync(run).ConfigureAwait(false);
                }
                inSink = true;
                if (result is not null)
                {
                    if (registered)
                    {
                        Unregister(run);
                        registered = false;
                    }
                    if (!await sink.DeliverAsync(result).ConfigureAwait(false))
                    {
                        return;
                    }
                    if (paced && run.Pacing.Conflation.IntervalMilliseconds > 0)
                    {
                        notBefore = wait.Clock.GetTimestamp() + IntervalTicks(run, wait);
                    }
                }
                else if (wait.Ended is var end and not WaitEnd.None)
                {
                    if (!await sink.WaitEndedAsync(end).ConfigureAwait(false))
                    {
                        return;
                    }
                    wait = wait.Restarted();
                }
                inSink = false;
                // Delivered and going on, or nothing after all (the message expired, or a late wake meant for
                // an earlier wait): register, then read again before waiting.
                if (!registered)
                {
                    Register(run);
                    registered = true;
                }
            }
        }
        catch when (!inSink)
        {
            sink.Failed();
            throw;
        }
        finally
        {
            if (registered)
            {
                Unregister(run);
            }
            _pool.Return(run);
            hold?.Dispose();
        }
    }

    private static long IntervalTicks(RunState run, SubscriptionWait wait) =>
        run.Pacing.Conflation.IntervalMilliseconds * wait.Clock.TimestampFrequency / 1000;

    /// <summary>
    /// Waits, on the run's own waiter and timer, until <paramref name="until"/> (a timestamp of the wait's
    /// clock) or until the client goes or the server stops, with the run's topics unregistered. A late wake
    /// meant for an earlier wait only makes it wait again.
    /// </summary>
    private static async ValueTask HoldAsync(RunState run, SubscriptionWait wait, long until)
    {
        while (wait.Ended is not (WaitEnd.ClientGone or WaitEnd.Stopping)
            && wait.Clock.GetElapsedTime(wait.Clock.GetTimestamp(), until) is var left && left > TimeSpan.Zero)
        {
            run.Waiter.Open();
            using (wait.ArmFor(run.Waiter, run.Timer, left))
            {
                await run.Waiter.WaitAsync().ConfigureAwait(false);
            }
            run.Waiter.Close();
        }
    }

    /// <summary>Takes the first delivery, or none when the wait ends: a long poll's answer, for in-process callers.</summary>
    private readonly struct FirstResult(StrongBox<PollResult> result) : ISubscriptionSink
    {
        public StrongBox<PollResult> Result { get; } = result;

        public ValueTask<bool> DeliverAsync(PollResult delivered)
        {
            Result.Value = delivered;
            return ValueTask.FromResult(false);
        }

        public ValueTask<bool> WaitEndedAsync(WaitEnd reason) => ValueTask.FromResult(false);

        public bool WantsPositions => false;

        public ValueTask<bool> PositionedAsync(Subscription[] positions) => ValueTask.FromResult(true);

        public void Failed()
        {
        }
    }

    private void Register(RunState poll)
    {
        poll.Waiter.ForgetSignals();
        poll.Waiter.Open();
        for (var i = 0; i < poll.Count; i++)
        {
            signals.Register(poll.Waiter, i, poll.Subscriptions[i].TopicId);
        }
    }

    private void Unregister(RunState poll)
    {
        foreach (var registration in poll.Waiter.Registrations)
        {
            signals.Unregister(registration);
        }
        poll.Waiter.Close();
    }

    /// <summary>
    /// Gathers what the topics have for their cursors, or null when there is nothing yet. A capped
    /// response is shared fairly, so that one busy topic cannot crowd the others out of every response:
    /// each topic first takes up to an equal share of the cap, then the topics that had more fill what is
    /// left. When even the shares do not fit (more busy topics than the cap has room for), the shares are
    /// taken again from a topic that rotates from one such poll to the next, so that no topic is always
    /// last. Whatever happens, the response lists topics in the order of the subscriptions, each topic's
    /// messages together.
    /// </summary>
    private async ValueTask<PollResult?> CollectAsync(RunState poll)
    {
        var count = poll.Count;
        var share = count == 1
            ? new ReadLimits(_options.MaxMessagesPerPoll, _options.MaxBytesPerPoll)
            : new ReadLimits(Math.Max(1, _options.MaxMessagesPerPoll / count), Math.Max(1L, _options.MaxBytesPerPoll / count));

        // Round one: every topic's share, read in one batch.
        poll.ResetRound();
        for (var i = 0; i < count; i++)
        {
            poll.Requests[i] = ShareRequest(poll, i, share);
        }
        await store.ReadAsync(poll.Requests, poll.Results, poll.Scratch).ConfigureAwait(false);
        var start = 0;
        var needsReread = false;
        for (var i = 0; i < count; i++)
        {
            var read = poll.Results[i];
            poll.Slots[i].Segment = new Segment(poll.Scratch, start, read.MessageCount, poll.Requests[i]);
            start += read.MessageCount;
            switch (Inspect(poll, i, read))
            {
                case Inspection.UnknownTopic:
                    return PollResult.TopicNotFound(poll.Subscriptions[i].TopicId);
                case Inspection.NotAStateTopic:
                    return PollResult.NotAStateTopic(poll.Subscriptions[i].TopicId);
                case Inspection.Reread:
                    needsReread = true;
                    break;
            }
        }
        if (needsReread)
        {
            await RereadAsync(poll, share).ConfigureAwait(false);
        }

        var budget = TakeShares(poll, share);
        // A conflation interval wants one message per topic: no extras, which could bring a second.
        if (count > 1 && !budget.IsExhausted && poll.Pacing.Conflation.IntervalMilliseconds == 0 && HasFullShare(poll))
        {
            await TakeExtrasAsync(poll, budget).ConfigureAwait(false);
        }
        return poll.ToResult();
    }

    private static bool HasFullShare(RunState poll)
    {
        foreach (ref readonly var slot in poll.Slots.AsSpan())
        {
            if (slot.Outcome == CollectOutcome.ShareFull && !slot.Conflated)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>What a topic's read said besides its messages.</summary>
    private enum Inspection { Messages, Done, Reread, UnknownTopic, NotAStateTopic }

    /// <summary>
    /// Turns a topic's state into notices and a cursor, following the cursor rules of docs/protocol.md,
    /// and says whether its messages can be used as read.
    /// </summary>
    private static Inspection Inspect(RunState poll, int slot, in TopicReadResult read)
    {
        var subscription = poll.Subscriptions[slot];
        ref var state = ref poll.Slots[slot];
        var followed = state.Epoch;
        if (state.Deleted)
        {
            // Told once; a stream reads on without it.
            state.Segment = default;
            return Inspection.Done;
        }
        if (!read.Exists || (followed is not null && read.Epoch != followed))
        {
            if (followed is null)
            {
                return Inspection.UnknownTopic;
            }
            // Deleted (or deleted and created again) while this subscription waited.
            poll.AddNotice(slot, new PollNotice(PollNoticeKind.TopicDeleted, subscription.TopicId, followed));
            state.Deleted = true;
            state.Segment = default;
            return Inspection.Done;
        }
        state.Epoch = read.Epoch;
        if (followed is null)
        {
            // The request's epoch string is young and the pooled state old: kept while the poll waits, it
            // would be one more object for the GC to find through the state (RunState's remarks).
            poll.Subscriptions[slot] = subscription with { Epoch = null };
        }
        ref var cursor = ref state.Cursor;
        if (state.WantsDocument)
        {
            // The cursor 'state' (or a reset's or a gap's document on a state topic): the document, then what follows it.
            if (!read.State)
            {
                return Inspection.NotAStateTopic;
            }
            if (read.Document is not { } document)
            {
                return Reread(poll, slot);
            }
            TakeDocument(poll, slot, read, document);
            return Inspection.Done;
        }
        // The client's epoch is compared once, at the poll's first read of the topic (followed is null then).
        if (subscription.Epoch is { } requested && requested != read.Epoch && followed is null)
        {
            poll.AddNotice(slot, new PollNotice(PollNoticeKind.EpochReset, subscription.TopicId, read.Epoch, FromMessageId: cursor,
                ToMessageId: read.LastMessageId, FirstMessageId: read.FirstRetainedMessageId, RequestedEpoch: requested));
            cursor = read.FirstRetainedMessageId;
            return read.State ? RereadDocument(poll, slot) : SkipsToLatest(poll, followed, cursor, read) ? SkipToLatest(poll, slot, read) : Reread(poll, slot, read);
        }
        if (cursor == 0)
        {
            cursor = read.LastMessageId + 1;
            state.Segment = default;
            return Inspection.Done;
        }
        if (cursor > read.LastMessageId + 1)
        {
            poll.AddNotice(slot, new PollNotice(PollNoticeKind.Reset, subscription.TopicId, read.Epoch, FromMessageId: cursor,
                ToMessageId: read.LastMessageId, FirstMessageId: read.FirstRetainedMessageId));
            cursor = read.FirstRetainedMessageId;
            return read.State ? RereadDocument(poll, slot) : SkipsToLatest(poll, followed, cursor, read) ? SkipToLatest(poll, slot, read) : Reread(poll, slot, read);
        }
        if (cursor < read.FirstRetainedMessageId)
        {
            if (read.State)
            {
                // Never a gap on a state topic: its document, which holds everything the lost messages did.
                return RereadDocument(poll, slot);
            }
            poll.AddNotice(slot, new PollNotice(PollNoticeKind.Gap, subscription.TopicId, read.Epoch, FromMessageId: cursor,
                ToMessageId: read.FirstRetainedMessageId - 1));
            cursor = read.FirstRetainedMessageId;
        }
        return SkipsToLatest(poll, followed, cursor, read) ? SkipToLatest(poll, slot, read) : Inspection.Messages;
    }

    /// <summary>
    /// Whether the topic skips to its latest message: always with a conflation interval, at the run's first
    /// read of it (<paramref name="followed"/> null) with <c>latest</c>; and only when it is more than one behind.
    /// </summary>
    private static bool SkipsToLatest(RunState poll, string? followed, long cursor, in TopicReadResult read) =>
        cursor < read.LastMessageId && cursor >= read.FirstRetainedMessageId
        && (poll.Pacing.Conflation.IntervalMilliseconds > 0 || (poll.Pacing.Conflation.Latest && followed is null));

    /// <summary>
    /// Announces the messages from the cursor to the one before the latest as conflated (skipped by the
    /// subscriber's choice, unlike a gap) and keeps the latest alone: from the read if it has it, else by
    /// reading again from it (a read cut by its share).
    /// </summary>
    private static Inspection SkipToLatest(RunState poll, int slot, in TopicReadResult read)
    {
        ref var state = ref poll.Slots[slot];
        if (read.State)
        {
            return ConflateState(poll, slot, read);
        }
        poll.AddNotice(slot, new PollNotice(PollNoticeKind.Conflated, poll.Subscriptions[slot].TopicId, read.Epoch, FromMessageId: state.Cursor,
            ToMessageId: read.LastMessageId - 1));
        state.Cursor = read.LastMessageId;
        state.Conflated = true;
        var segment = state.Segment;
        if (segment.Count > 0 && segment.Source![segment.Start + segment.Count - 1].MessageId == read.LastMessageId)
        {
            state.Segment = segment with { Start = segment.Start + segment.Count - 1, Count = 1 };
            return Inspection.Messages;
        }
        state.Segment = default;
        state.Reread = true;
        return Inspection.Reread;
    }

    /// <summary>
    /// Conflation on a state topic: the skipped messages and the latest composed into one message with the latest's
    /// id (<see cref="StateConflation"/>), announced as conflated; when the read does not hold them all, or two
    /// patches do not compose, the document instead (a <c>state</c> notice), which is as exact.
    /// </summary>
    private static Inspection ConflateState(RunState poll, int slot, in TopicReadResult read)
    {
        ref var state = ref poll.Slots[slot];
        var segment = state.Segment;
        var run = segment.Count > 0 && segment.Source![segment.Start].MessageId == state.Cursor
            && segment.Source[segment.Start + segment.Count - 1].MessageId == read.LastMessageId
            ? StateConflation.Compose(CollectionsMarshal.AsSpan(segment.Source).Slice(segment.Start, segment.Count))
            : null;
        if (run is null)
        {
            return RereadDocument(poll, slot);
        }
        poll.AddNotice(slot, new PollNotice(PollNoticeKind.Conflated, poll.Subscriptions[slot].TopicId, read.Epoch, FromMessageId: state.Cursor,
            ToMessageId: read.LastMessageId - 1));
        state.Cursor = read.LastMessageId;
        state.Conflated = true;
        state.Segment = segment with { Source = [run], Start = 0, Count = 1 };
        return Inspection.Messages;
    }

    /// <summary>Reads the state topic again for its document (rare: one more read), delivered in place of messages.</summary>
    private static Inspection RereadDocument(RunState poll, int slot)
    {
        poll.Slots[slot].WantsDocument = true;
        return Reread(poll, slot);
    }

    private static Inspection Reread(RunState poll, int slot)
    {
        ref var state = ref poll.Slots[slot];
        state.Segment = default;
        state.Reread = true;
        return Inspection.Reread;
    }

    /// <summary>Delivers a state topic's document as a <c>state</c> notice and moves the cursor past its version.</summary>
    private static void TakeDocument(RunState poll, int slot, in TopicReadResult read, ReadOnlyMemory<byte> document)
    {
        ref var state = ref poll.Slots[slot];
        poll.AddNotice(slot, PollNotice.State(poll.Subscriptions[slot].TopicId, read.Epoch, read.LastMessageId, document));
        state.Cursor = read.LastMessageId + 1;
        state.WantsDocument = false;
        state.Segment = default;
    }

    private static Inspection Reread(RunState poll, int slot, in TopicReadResult read)
    {
        ref var state = ref poll.Slots[slot];
        state.Segment = default;
        if (read.FirstRetainedMessageId > read.LastMessageId)
        {
            return Inspection.Done;
        }
        state.Reread = true;
        return Inspection.Reread;
    }

    /// <summary>Reads again, from their new cursors, the topics whose cursor a reset moved (rare: one more read).</summary>
    private async ValueTask RereadAsync(RunState poll, ReadLimits share)
    {
        var slots = new List<int>();
        for (var i = 0; i < poll.Count; i++)
        {
            if (poll.Slots[i].Reread)
            {
                slots.Add(i);
            }
        }
        var requests = new TopicReadRequest[slots.Count];
        for (var n = 0; n < slots.Count; n++)
        {
            requests[n] = ShareRequest(poll, slots[n], share);
        }
        var results = new TopicReadResult[slots.Count];
        var messages = new List<Message>();
        await store.ReadAsync(requests, results, messages).ConfigureAwait(false);
        var start = 0;
        for (var n = 0; n < slots.Count; n++)
        {
            var slot = slots[n];
            var read = results[n];
            // The topic went away between the two reads: the next poll says so. A topic that skipped to its
            // latest message takes that one; what was published since goes in the next delivery.
            var same = read.Exists && read.Epoch == poll.Slots[slot].Epoch;
            if (same && poll.Slots[slot].WantsDocument && read.Document is { } document)
            {
                TakeDocument(poll, slot, read, document);
                continue;
            }
            poll.Slots[slot].Segment = same
                ? new Segment(messages, start, poll.Slots[slot].Conflated ? Math.Min(1, read.MessageCount) : read.MessageCount, requests[n])
                : default;
            start += read.MessageCount;
        }
    }

    /// <summary>
    /// Round one: every topic takes up to its share, in subscription order. If the response filled before
    /// every topic had its share, takes the shares again from the next topic of the rotation. Returns the
    /// budget left.
    /// </summary>
    private PollBudget TakeShares(RunState poll, ReadLimits share)
    {
        var count = poll.Count;
        var first = 0;
        while (true)
        {
            var budget = new PollBudget(_options.MaxMessagesPerPoll, _options.MaxBytesPerPoll);
            var sharesDidNotFit = false;
            for (int n = 0, i = first; n < count; n++, i = i + 1 == count ? 0 : i + 1)
            {
                var shareBudget = count == 1 ? PollBudget.Unlimited : new PollBudget(share.Messages, share.Bytes);
                ref var slot = ref poll.Slots[i];
                var outcome = Take(slot.Segment, ref shareBudget, ref budget, out slot.Taken, poll.AnswerBytes);
                slot.Outcome = outcome;
                sharesDidNotFit |= outcome == CollectOutcome.ResponseFull;
            }
            if (!sharesDidNotFit || first != 0 || count == 1)
            {
                poll.First = first;
                return budget;
            }
            first = (int)(Interlocked.Increment(ref _rotation) % (uint)count);
            if (first == 0)
            {
                poll.First = first;
                return budget;
            }
        }
    }

    /// <summary>Round two: the topics whose share was full take, in the same order, what room the response has left.</summary>
    private async ValueTask TakeExtrasAsync(RunState poll, PollBudget budget)
    {
        var count = poll.Count;
        var slots = new List<int>();
        for (int n = 0, i = poll.First; n < count; n++, i = i + 1 == count ? 0 : i + 1)
        {
            if (poll.Slots[i].Outcome == CollectOutcome.ShareFull && !poll.Slots[i].Conflated)
            {
                slots.Add(i);
            }
        }
        var room = budget.Remaining;
        var requests = new TopicReadRequest[slots.Count];
        for (var n = 0; n < slots.Count; n++)
        {
            var slot = slots[n];
            requests[n] = new TopicReadRequest(poll.Subscriptions[slot].TopicId, poll.CursorAfterShare(slot),
                room.Messages + 1, room.Bytes == long.MaxValue ? long.MaxValue : room.Bytes + 1);
        }
        var results = new TopicReadResult[slots.Count];
        var messages = new List<Message>();
        await store.ReadAsync(requests, results, messages).ConfigureAwait(false);
        var start = 0;
        for (var n = 0; n < slots.Count && !budget.IsExhausted; n++)
        {
            var slot = slots[n];
            var read = results[n];
            var segment = new Segment(messages, start, read.MessageCount, requests[n]);
            start += read.MessageCount;
            if (!read.Exists || read.Epoch != poll.Slots[slot].Epoch)
            {
                poll.AddNotice(slot, new PollNotice(PollNoticeKind.TopicDeleted, poll.Subscriptions[slot].TopicId, poll.Slots[slot].Epoch!));
                poll.Slots[slot].Deleted = true;
                continue;
            }
            var from = requests[n].FromMessageId;
            if (from < read.FirstRetainedMessageId && read.State)
            {
                // Never a gap on a state topic: the next delivery reads on from the share and finds its document.
                continue;
            }
            if (from < read.FirstRetainedMessageId)
            {
                // Expired or evicted between the two rounds.
                poll.AddNotice(slot, new PollNotice(PollNoticeKind.Gap, poll.Subscriptions[slot].TopicId, read.Epoch, FromMessageId: from,
                    ToMessageId: read.FirstRetainedMessageId - 1));
            }
            var unlimited = PollBudget.Unlimited;
            Take(segment, ref unlimited, ref budget, out var taken, poll.AnswerBytes);
            poll.Slots[slot].Extra = segment with { Count = taken };
        }
    }

    /// <summary>Takes a segment's messages while both budgets allow; says what stopped it.</summary>
    private static CollectOutcome Take(in Segment segment, ref PollBudget share, ref PollBudget budget, out int taken, Func<Message, int>? answerBytes)
    {
        taken = 0;
        long bytes = 0;
        for (var k = 0; k < segment.Count; k++)
        {
            var message = segment.Source![segment.Start + k];
            var body = message.Body.Length;
            var size = answerBytes?.Invoke(message) ?? body;
            if (!share.TryTake(size))
            {
                return CollectOutcome.ShareFull;
            }
            if (!budget.TryTake(size))
            {
                return CollectOutcome.ResponseFull;
            }
            taken++;
            bytes += body;
        }
        // Everything read was taken; if the read stopped at its limit there may be more.
        return segment.Count > 0 && (segment.Count >= segment.Request.MaxMessages || bytes >= segment.Request.MaxBytes)
            ? CollectOutcome.ShareFull
            : CollectOutcome.Complete;
    }

    private static TopicReadRequest ShareRequest(RunState poll, int slot, ReadLimits share)
    {
        var cursor = poll.Slots[slot].Cursor;
        var topicId = poll.Subscriptions[slot].TopicId;
        if (poll.Slots[slot].WantsDocument)
        {
            return new TopicReadRequest(topicId, cursor, 0, 0, WithDocument: true);
        }
        // One more message and byte than the share, so that what stops the taking is seen, not guessed.
        return cursor == 0
            ? new TopicReadRequest(topicId, 0, 0, 0)
            : new TopicReadRequest(topicId, cursor, share.Messages + 1, share.Bytes == long.MaxValue ? long.MaxValue : share.Bytes + 1);
    }

    private readonly record struct ReadLimits(int Messages, long Bytes);

    /// <summary>A run of one topic's messages inside a read's message list.</summary>
    private readonly record struct Segment(List<Message>? Source, int Start, int Count, TopicReadRequest Request);
}
