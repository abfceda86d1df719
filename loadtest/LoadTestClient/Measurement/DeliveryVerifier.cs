namespace Laharsub.LoadTestClient.Measurement;

/// <summary>What a delivery turned out to be once checked against the ids already seen.</summary>
internal enum DeliveryKind
{
    /// <summary>The next id, as expected.</summary>
    InOrder,
    /// <summary>A new id after a skipped one: the skipped ids are counted lost until they turn up.</summary>
    AfterLoss,
    /// <summary>An id that had been counted lost and arrived late.</summary>
    OutOfOrder,
    /// <summary>An id already delivered.</summary>
    Duplicate,
}

/// <summary>
/// One subscriber's view of one topic: the ids it has received must be 1, 2, 3, ... with nothing
/// skipped and nothing twice, because every simulated client starts reading a topic created for the
/// run from id 1. Keeps the next expected id (also the poll cursor) and, only once something went
/// wrong, the set of ids still missing, so that the normal path costs one comparison.
/// </summary>
/// <remarks>
/// A target whose ids only increase, with holes (nchan's packed TIME:TAG,
/// <paramref name="consecutiveIds"/> false), is checked for order alone: every id must be above the
/// last one, and one that is not counts as duplicated (a repeat and a late message look the same
/// there). A skipped message then shows only at the end, as a delivery expected and not received.
/// </remarks>
internal sealed class DeliveryVerifier(long topicId, bool consecutiveIds = true)
{
    // Remembering every missing id of a badly broken server would exhaust memory; past this many
    // they are still counted, just not recognised if they arrive later.
    private const int MaxRememberedMissing = 100_000;

    private HashSet<long>? _missing;
    private byte[]? _epoch;

    public long TopicId { get; } = topicId;

    /// <summary>The smallest id not yet received: the cursor for the next poll.</summary>
    public long Next { get; private set; } = 1;

    /// <summary>
    /// The topic's epoch (UTF-8) as the server last named it, sent back with <see cref="Next"/> so that a
    /// topic id that has come to name another topic is answered with an epoch reset; empty until an
    /// answer named one, and always for targets without epochs.
    /// </summary>
    public ReadOnlySpan<byte> Epoch => _epoch;

    /// <summary>Keeps the epoch an answer named for this topic; allocates only when it changes.</summary>
    public void ObserveEpoch(ReadOnlySpan<byte> epoch)
    {
        if (!epoch.SequenceEqual(_epoch))
        {
            _epoch = epoch.ToArray();
        }
    }

    public DeliveryKind Observe(long messageId, DeliveryCounters counters)
    {
        if (!consecutiveIds)
        {
            if (messageId >= Next)
            {
                Next = messageId + 1;
                return DeliveryKind.InOrder;
            }
            counters.AddDuplicate();
            return DeliveryKind.Duplicate;
        }
        if (messageId == Next)
        {
            Next++;
            return DeliveryKind.InOrder;
        }
        if (messageId > Next)
        {
            counters.AddLost(messageId - Next);
            _missing ??= [];
            for (var id = Next; id < messageId && _missing.Count < MaxRememberedMissing; id++)
            {
                _missing.Add(id);
            }
            Next = messageId + 1;
            return DeliveryKind.AfterLoss;
        }
        if (_missing is not null && _missing.Remove(messageId))
        {
            counters.AddLost(-1);
            counters.AddOutOfOrder();
            return DeliveryKind.OutOfOrder;
        }
        counters.AddDuplicate();
        return DeliveryKind.Duplicate;
    }

    /// <summary>A gap notice: ids <paramref name="fromId"/>..<paramref name="toId"/> expired before they were read.</summary>
    public void ObserveGap(long fromId, long toId, DeliveryCounters counters)
    {
        counters.AddGapNotice(Math.Max(0, toId - Math.Max(fromId, Next) + 1));
        if (toId >= Next)
        {
            Next = toId + 1;
        }
        _missing?.RemoveWhere(id => id >= fromId && id <= toId);
    }

    /// <summary>
    /// A reset notice: the topic is behind the cursor, or (<paramref name="epochChanged"/>) it is another
    /// incarnation of the topic id. Neither should happen in a run; the messages that follow the notice
    /// are the topic's from <paramref name="firstMessageId"/> on, and the ids missing from before no longer mean anything.
    /// </summary>
    public void ObserveReset(long firstMessageId, bool epochChanged, DeliveryCounters counters)
    {
        if (epochChanged)
        {
            counters.AddEpochReset();
        }
        else
        {
            counters.AddReset();
        }
        Next = firstMessageId;
        _missing?.Clear();
    }
}
