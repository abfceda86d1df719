using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using Laharsub.Server.Hosting;
using Laharsub.Server.Wire;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// Keeps topics and messages in this process. Fast and simple; everything is lost when the process
/// stops, and every server instance has its own topics.
/// </summary>
public sealed class InMemoryBackend(IOptions<LaharsubOptions> options, WireFormat wire, TimeProvider timeProvider) : ILaharsubBackend
{
    private readonly LaharsubOptions _options = options.Value;
    private readonly ConcurrentDictionary<long, Topic> _topics = new();
    private long _lastTopicId;
    private int _topicCount;
    private long _retainedBytes;
    private uint _collectRotation;
    private int _sweepingWhenFull;

    public long RetainedBytes => Volatile.Read(ref _retainedBytes);

    // A creation refused at the limit counts itself for an instant before it backs out.
    public int TopicCount => Math.Min(Volatile.Read(ref _topicCount), _options.MaxTopics);

    public ValueTask<TopicInfo?> CreateTopicAsync(string? label = null, CancellationToken cancellationToken = default)
    {
        if (Interlocked.Increment(ref _topicCount) > _options.MaxTopics)
        {
            Interlocked.Decrement(ref _topicCount);
            return ValueTask.FromResult<TopicInfo?>(null);
        }
        var topic = new Topic(Interlocked.Increment(ref _lastTopicId), timeProvider.GetUtcNow(), label);
        _topics[topic.Id] = topic;
        return ValueTask.FromResult<TopicInfo?>(topic.GetInfo(ExpiryThreshold(), ref _retainedBytes));
    }

    public ValueTask<TopicInfo?> GetTopicAsync(long topicId, CancellationToken cancellationToken = default) =>
        ValueTask.FromResult(_topics.TryGetValue(topicId, out var topic) ? topic.GetInfo(ExpiryThreshold(), ref _retainedBytes) : null);

    public ValueTask<IReadOnlyList<TopicInfo>> ListTopicsAsync(long afterTopicId, int limit, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(afterTopicId);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        // Ids are assigned in sequence, so walking them in order is a keyset page without sorting;
        // deleted ids are skipped at the cost of one lookup each.
        var page = new List<TopicInfo>(Math.Min(limit, 128));
        var threshold = ExpiryThreshold();
        var last = Volatile.Read(ref _lastTopicId);
        for (var id = afterTopicId + 1; id <= last && page.Count < limit; id++)
        {
            if (_topics.TryGetValue(id, out var topic))
            {
                page.Add(topic.GetInfo(threshold, ref _retainedBytes));
            }
        }
        return ValueTask.FromResult<IReadOnlyList<TopicInfo>>(page);
    }

    public ValueTask<bool> DeleteTopicAsync(long topicId, CancellationToken cancellationToken = default)
    {
        if (!_topics.TryRemove(topicId, out var topic))
        {
            return ValueTask.FromResult(false);
        }
        Interlocked.Add(ref _retainedBytes, -topic.Delete());
        Interlocked.Decrement(ref _topicCount);
        return ValueTask.FromResult(true);
    }

    public ValueTask<PublishResult> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(contentType);
        if (body.Length == 0 || body.Length > _options.MaxMessageBytes)
        {
            return ValueTask.FromResult(new PublishResult(PublishStatus.InvalidSize));
        }
        if (!_topics.TryGetValue(topicId, out var topic))
        {
            return ValueTask.FromResult(new PublishResult(PublishStatus.TopicNotFound));
        }
        if (wire.ContainsBoundary(body.Span))
        {
            return ValueTask.FromResult(new PublishResult(PublishStatus.ContainsBoundary));
        }
        // Reserve the bytes first: when the server is full the message is refused, never stored and
        // later dropped. Expired messages are swept first so a full server frees what it can.
        if (!TryReserve(body.Length))
        {
            // One inline sweep at a time: a full server's retrying publishers would otherwise each
            // walk every topic, contending for the topics' locks just when the server is busiest.
            if (Interlocked.CompareExchange(ref _sweepingWhenFull, 1, 0) == 0)
            {
                try
                {
                    Sweep();
                }
                finally
                {
                    Volatile.Write(ref _sweepingWhenFull, 0);
                }
            }
            if (!TryReserve(body.Length))
            {
                return ValueTask.FromResult(new PublishResult(PublishStatus.StorageFull));
            }
        }
        var messageId = topic.Publish(wire, contentType, body.Span, timeProvider.GetUtcNow(), ExpiryThreshold(),
            _options.MaxMessagesPerTopic, ref _retainedBytes);
        if (messageId == 0)
        {
            Interlocked.Add(ref _retainedBytes, -body.Length);
            return ValueTask.FromResult(new PublishResult(PublishStatus.TopicNotFound));
        }
        return ValueTask.FromResult(new PublishResult(PublishStatus.Published, messageId));
    }

    public async ValueTask<PollResult> PollAsync(IReadOnlyList<Subscription> subscriptions, CancellationToken cancellationToken)
    {
        var topics = new Topic[subscriptions.Count];
        // 0 marks a cursor not yet resolved: message ids start at 1.
        var cursors = new long[subscriptions.Count];
        for (var i = 0; i < topics.Length; i++)
        {
            var subscription = subscriptions[i];
            if (!_topics.TryGetValue(subscription.TopicId, out var topic))
            {
                return PollResult.TopicNotFound(subscription.TopicId);
            }
            topics[i] = topic;
            cursors[i] = subscription.From ?? 0;
        }

        while (true)
        {
            var result = Collect(topics, cursors);
            if (result is not null)
            {
                return result;
            }
            if (cancellationToken.IsCancellationRequested)
            {
                return PollResult.Empty;
            }

            var waiter = new PollWaiter(topics.Length);
            var mustWait = true;
            for (var i = 0; i < topics.Length && mustWait; i++)
            {
                mustWait = topics[i].TryRegister(waiter, i, cursors[i]);
            }
            if (mustWait)
            {
                await using (cancellationToken.UnsafeRegister(static state => ((PollWaiter)state!).Wake(), waiter).ConfigureAwait(false))
                {
                    await waiter.Woken.ConfigureAwait(false);
                }
            }
            for (var i = 0; i < topics.Length; i++)
            {
                if (waiter.Registrations[i] is { } registration)
                {
                    topics[i].Unregister(registration);
                }
            }
        }
    }

    /// <summary>Drops expired messages from every topic; run periodically by the retention sweeper.</summary>
    internal void Sweep()
    {
        var threshold = ExpiryThreshold();
        // Enumerating the dictionary itself takes no lock and copies nothing (.Values would do both).
        foreach (var (_, topic) in _topics)
        {
            if (topic.MayHoldMessages)
            {
                topic.Expire(threshold, ref _retainedBytes);
            }
        }
    }

    /// <summary>
    /// Gathers what the topics have for their cursors, or null when there is nothing yet. A capped
    /// response is shared fairly, so that one busy topic cannot crowd the others out of every response:
    /// each topic first takes up to an equal share of the cap, then the topics that had more fill what is
    /// left. When even the shares do not fit (more busy topics than the cap has room for), the gathering
    /// starts over from a topic that rotates from one such poll to the next, so that no topic is always
    /// last. Whatever happens, the response lists topics in the order of the subscriptions, each topic's
    /// messages together.
    /// </summary>
    private PollResult? Collect(Topic[] topics, long[] cursors)
    {
        List<PollNotice>? notices = null;
        List<Message>? messages = null;
        var threshold = ExpiryThreshold();
        var budget = new PollBudget(_options.MaxMessagesPerPoll, _options.MaxBytesPerPoll);
        var count = topics.Length;
        if (count == 1)
        {
            topics[0].Collect(ref cursors[0], ref budget, PollBudget.Unlimited, ref notices, ref messages, threshold, ref _retainedBytes);
            return Result(notices, messages);
        }

        var shareEnds = count <= 256 ? stackalloc int[count] : new int[count];
        var outcomes = count <= 256 ? stackalloc CollectOutcome[count] : new CollectOutcome[count];
        var first = CollectShares(topics, cursors, threshold, shareEnds, outcomes, ref budget, ref notices, ref messages);
        var extras = CollectExtras(topics, cursors, threshold, first, outcomes, ref budget, ref notices);
        if (extras is null && first == 0)
        {
            return Result(notices, messages);
        }
        // Round two may add a notice too (a topic deleted between the rounds), after round one's.
        if (notices is { Count: > 1 })
        {
            notices = InSubscriptionOrder(notices, topics);
        }
        var ordered = InSubscriptionOrder(messages, shareEnds, extras, first);
        return Result(notices, ordered.Count == 0 ? null : ordered);

        static PollResult? Result(List<PollNotice>? notices, List<Message>? messages) =>
            notices is null && messages is null ? null : new PollResult(notices, messages, unknownTopicId: null);
    }

    /// <summary>
    /// Round one: every topic takes up to its fair share, in subscription order. If the response filled
    /// before every topic had its share, starts over (cursors restored) from the next topic of the
    /// rotation. Returns the topic it started from; slot n of <paramref name="shareEnds"/> and
    /// <paramref name="outcomes"/> is the n-th topic from there.
    /// </summary>
    private int CollectShares(Topic[] topics, long[] cursors, long threshold, Span<int> shareEnds, Span<CollectOutcome> outcomes,
        ref PollBudget budget, ref List<PollNotice>? notices, ref List<Message>? messages)
    {
        var count = topics.Length;
        var share = PollBudget.ShareOf(_options.MaxMessagesPerPoll, _options.MaxBytesPerPoll, count);
        var startingCursors = count <= 256 ? stackalloc long[count] : new long[count];
        cursors.CopyTo(startingCursors);
        var first = 0;
        while (true)
        {
            var sharesDidNotFit = false;
            for (int n = 0, i = first; n < count; n++, i = i + 1 == count ? 0 : i + 1)
            {
                outcomes[n] = topics[i].Collect(ref cursors[i], ref budget, share, ref notices, ref messages, threshold, ref _retainedBytes);
                sharesDidNotFit |= outcomes[n] == CollectOutcome.ResponseFull;
                shareEnds[n] = messages?.Count ?? 0;
            }
            if (!sharesDidNotFit || first != 0)
            {
                return first;
            }
            first = (int)(Interlocked.Increment(ref _collectRotation) % (uint)count);
            if (first == 0)
            {
                return first;
            }
            startingCursors.CopyTo(cursors);
            budget = new PollBudget(_options.MaxMessagesPerPoll, _options.MaxBytesPerPoll);
            notices = null;
            messages = null;
        }
    }

    /// <summary>
    /// Round two: the topics whose share was full take, in the same order, what room the response has
    /// left. Returns each one's extra messages by slot, or null when there was no round two.
    /// </summary>
    private List<Message>?[]? CollectExtras(Topic[] topics, long[] cursors, long threshold, int first, ReadOnlySpan<CollectOutcome> outcomes,
        ref PollBudget budget, ref List<PollNotice>? notices)
    {
        if (!outcomes.Contains(CollectOutcome.ShareFull) || budget.IsExhausted)
        {
            return null;
        }
        var count = topics.Length;
        var extras = new List<Message>?[count];
        for (int n = 0, i = first; n < count && !budget.IsExhausted; n++, i = i + 1 == count ? 0 : i + 1)
        {
            if (outcomes[n] == CollectOutcome.ShareFull)
            {
                topics[i].Collect(ref cursors[i], ref budget, PollBudget.Unlimited, ref notices, ref extras[n], threshold, ref _retainedBytes);
            }
        }
        return extras;
    }

    /// <summary>Puts each topic's share and then its extras together, topics in subscription order.</summary>
    private static List<Message> InSubscriptionOrder(List<Message>? shares, ReadOnlySpan<int> shareEnds, List<Message>?[]? extras, int first)
    {
        var count = shareEnds.Length;
        var capacity = shares?.Count ?? 0;
        foreach (var more in extras ?? [])
        {
            capacity += more?.Count ?? 0;
        }
        var ordered = new List<Message>(capacity);
        for (var i = 0; i < count; i++)
        {
            var n = (i - first + count) % count;
            if (shares is not null)
            {
                ordered.AddRange(CollectionsMarshal.AsSpan(shares)[(n == 0 ? 0 : shareEnds[n - 1])..shareEnds[n]]);
            }
            if (extras?[n] is { } more)
            {
                ordered.AddRange(more);
            }
        }
        return ordered;
    }

    /// <summary>
    /// Sorts notices (rare: a few per response at most) by their topic's place in the poll. A method of
    /// its own because a lambda over <paramref name="topics"/> inside Collect would allocate its closure
    /// on every call of Collect, not only when notices need sorting.
    /// </summary>
    private static List<PollNotice> InSubscriptionOrder(List<PollNotice> notices, Topic[] topics) =>
        [.. notices.OrderBy(notice => Array.FindIndex(topics, topic => topic.Id == notice.TopicId))];

    private bool TryReserve(int bytes)
    {
        if (Interlocked.Add(ref _retainedBytes, bytes) <= _options.MaxRetainedBytes)
        {
            return true;
        }
        Interlocked.Add(ref _retainedBytes, -bytes);
        return false;
    }

    private long ExpiryThreshold() => timeProvider.GetUtcNow().UtcTicks - _options.MessageTimeToLive.Ticks;
}
