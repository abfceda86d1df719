using System.Collections.Concurrent;
using System.Diagnostics;
using System.Security.Cryptography;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// Keeps topics and messages in this process: fast and simple, but everything is lost when the
/// process stops, and every server instance has its own topics. The default store.
/// </summary>
internal sealed partial class InMemoryStore : ILaharsubStore, IPresenceStore, IRetentionBudget, IDisposable
{
    private readonly LaharsubStoreOptions _options;
    private readonly ITopicSignals _signals;
    private readonly TimeProvider _timeProvider;
    private readonly ConcurrentDictionary<long, Topic> _topics = new();
    private readonly ITimer _sweepTimer;
    private readonly IdempotencyRecords _idempotencyKeys;
    private long _lastTopicId;
    private int _topicCount;
    private long _retainedBytes;
    private int _sweepingWhenFull;

    /// <summary>Creates the store; it sweeps expired messages every <c>RetentionSweepInterval</c> until disposed.</summary>
    public InMemoryStore(IOptions<LaharsubStoreOptions> options, ITopicSignals signals, TimeProvider timeProvider)
    {
        _options = options.Value;
        _signals = signals;
        _timeProvider = timeProvider;
        _idempotencyKeys = new IdempotencyRecords(_options);
        _sweepTimer = timeProvider.CreateTimer(static state => ((InMemoryStore)state!).Sweep(), this,
            _options.RetentionSweepInterval, _options.RetentionSweepInterval);
    }

    /// <inheritdoc/>
    public ValueTask<StoreStatistics> GetStatisticsAsync(CancellationToken cancellationToken = default) =>
        // A creation refused at the limit counts itself for an instant before it backs out.
        ValueTask.FromResult(new StoreStatistics(Math.Min(Volatile.Read(ref _topicCount), _options.MaxTopics), Volatile.Read(ref _retainedBytes)));

    /// <inheritdoc/>
    public ValueTask<TopicInfo?> CreateTopicAsync(string? label = null, bool state = false, CancellationToken cancellationToken = default)
    {
        if (Interlocked.Increment(ref _topicCount) > _options.MaxTopics)
        {
            Interlocked.Decrement(ref _topicCount);
            return ValueTask.FromResult<TopicInfo?>(null);
        }
        var topic = new Topic(Interlocked.Increment(ref _lastTopicId), NewEpoch(), _timeProvider.GetUtcNow(), label, state: state);
        // The empty document's few bytes are counted even on a full server: MaxTopics, not retention, bounds topics.
        Interlocked.Add(ref _retainedBytes, topic.DocumentCost);
        _topics[topic.Id] = topic;
        return ValueTask.FromResult<TopicInfo?>(topic.GetInfo(ExpiryThreshold(), ref _retainedBytes));
    }

    /// <summary>A random 64-bit epoch in 16 hex digits: a restarted process cannot repeat its predecessor's.</summary>
    internal static string NewEpoch() => Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(8));

    /// <inheritdoc/>
    public ValueTask<TopicInfo?> GetTopicAsync(long topicId, CancellationToken cancellationToken = default) =>
        ValueTask.FromResult(_topics.TryGetValue(topicId, out var topic) ? topic.GetInfo(ExpiryThreshold(), ref _retainedBytes) : null);

    /// <inheritdoc/>
    public ValueTask<IReadOnlyList<TopicInfo>> ListTopicsAsync(long afterTopicId, int limit, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(afterTopicId);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var last = Volatile.Read(ref _lastTopicId);
        if (afterTopicId >= last)
        {
            // Also keeps afterTopicId + 1 from overflowing at long.MaxValue into a walk from long.MinValue.
            return ValueTask.FromResult<IReadOnlyList<TopicInfo>>([]);
        }
        var page = new List<TopicInfo>(Math.Min(limit, 128));
        var threshold = ExpiryThreshold();
        if (last - afterTopicId > 4L * _topics.Count + limit)
        {
            // Mostly deleted ids ahead: sorting the live topics beats stepping through dead ids.
            foreach (var topic in _topics.Values.Where(t => t.Id > afterTopicId).OrderBy(t => t.Id).Take(limit))
            {
                page.Add(topic.GetInfo(threshold, ref _retainedBytes));
            }
            return ValueTask.FromResult<IReadOnlyList<TopicInfo>>(page);
        }
        // Ids are assigned in sequence, so walking them in order is a keyset page without sorting.
        for (var id = afterTopicId + 1; id <= last && page.Count < limit; id++)
        {
            if (_topics.TryGetValue(id, out var topic))
            {
                page.Add(topic.GetInfo(threshold, ref _retainedBytes));
            }
        }
        return ValueTask.FromResult<IReadOnlyList<TopicInfo>>(page);
    }

    /// <inheritdoc/>
    public ValueTask<bool> DeleteTopicAsync(long topicId, CancellationToken cancellationToken = default)
    {
        if (!_topics.TryRemove(topicId, out var topic))
        {
            return ValueTask.FromResult(false);
        }
        Interlocked.Add(ref _retainedBytes, -topic.Delete());
        Interlocked.Decrement(ref _topicCount);
        _signals.Signal(topicId);
        if (topic.PresenceTopicId is { } companion)
        {
            // Its members go without events: the companion that would carry them goes too.
            _rooms.TryRemove(topicId, out _);
            _ = DeleteTopicAsync(companion, cancellationToken);
        }
        return ValueTask.FromResult(true);
    }

    /// <inheritdoc/>
    public ValueTask<PublishResult> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, string? ifEpoch = null,
        CancellationToken cancellationToken = default) =>
        ValueTask.FromResult(Publish(topicId, body, contentType, ifEpoch, presenceEvent: false));

    private PublishResult Publish(long topicId, ReadOnlyMemory<byte> body, string contentType, string? ifEpoch, bool presenceEvent)
    {
        ArgumentNullException.ThrowIfNull(contentType);
        if (body.Length == 0 || body.Length > _options.MaxMessageBytes)
        {
            return new PublishResult(PublishStatus.InvalidSize);
        }
        if (!Message.IsValidContentType(contentType))
        {
            return new PublishResult(PublishStatus.InvalidContentType);
        }
        if (!_topics.TryGetValue(topicId, out var topic))
        {
            return new PublishResult(PublishStatus.TopicNotFound);
        }
        if (ifEpoch is not null && ifEpoch != topic.Epoch)
        {
            return new PublishResult(PublishStatus.EpochMismatch, Epoch: topic.Epoch);
        }
        if (topic.PresenceOf is not null && !presenceEvent)
        {
            return new PublishResult(PublishStatus.PresenceTopic);
        }
        // Reserve the cost first: when the server is full the message is refused, never stored and
        // later dropped.
        var traceContext = Message.PublisherTraceContext;
        var cost = RetainedCost.Of(body.Length, body.Length, contentType.Length, topic.Epoch.Length, traced: traceContext != default);
        if (!TryReserveOrSweep(cost))
        {
            return new PublishResult(PublishStatus.StorageFull, RetryAfter: UntilOldestExpires());
        }
        var result = AppendOne(topic, WriteOf(contentType), ifVersion: null, StoredContentType(topic, contentType), RetainedArray.Copy(body.Span), traceContext);
        if (result.Status != PublishStatus.Published)
        {
            Interlocked.Add(ref _retainedBytes, -cost);
            return result;
        }
        // A client's publish answers a few of the subscriptions it wakes on its own thread; a presence event
        // is published from a lease renewal or the sweeper, which keep theirs to themselves.
        if (presenceEvent)
        {
            _signals.Signal(topicId);
        }
        else
        {
            _signals.SignalFromPublisher(topicId);
        }
        return result;
    }

    /// <summary>A merge patch is one on a state topic (an ordinary message on another); anything else is an ordinary message, which a state topic refuses.</summary>
    private static StateWrite WriteOf(string contentType) => MergePatch.IsMergePatch(contentType) ? StateWrite.Patch : StateWrite.Message;

    /// <summary>A state topic keeps its patches under the one content type its subscribers look for; another topic keeps the publisher's.</summary>
    private static string StoredContentType(Topic topic, string contentType) => topic.HoldsState ? MergePatch.MediaType : contentType;

    /// <summary>
    /// Appends one write to <paramref name="topic"/> under its lock, its message's cost reserved already: checks it and
    /// applies it to the document (<see cref="Topic.PrepareLocked"/>), charges the document's growth, appends.
    /// </summary>
    private PublishResult AppendOne(Topic topic, StateWrite write, long? ifVersion, string contentType, byte[] body, ActivityContext traceContext)
    {
        topic.Enter();
        try
        {
            if (topic.IsDeletedLocked)
            {
                return new PublishResult(PublishStatus.TopicNotFound);
            }
            var prepared = topic.PrepareLocked(write, ifVersion, body, _options.MaxStateBytes, out var document);
            if (prepared.Status != PublishStatus.Published)
            {
                return prepared;
            }
            if (!TryChargeDocuments(topic.DocumentCostChange(document)))
            {
                return new PublishResult(PublishStatus.StorageFull, RetryAfter: UntilOldestExpires());
            }
            var messageId = topic.AppendLocked(contentType, body, traceContext, _timeProvider.GetUtcNow(), ExpiryThreshold(), _options.MaxMessagesPerTopic, this,
                ref _retainedBytes, document);
            return new PublishResult(PublishStatus.Published, messageId, topic.Epoch);
        }
        finally
        {
            topic.Exit();
        }
    }

    /// <summary>Charges what documents grow by (under their topics' locks, so without sweeping), or releases what they shrink by.</summary>
    private bool TryChargeDocuments(long change)
    {
        if (change > 0)
        {
            return TryReserve(change);
        }
        Interlocked.Add(ref _retainedBytes, change);
        return true;
    }

    /// <inheritdoc/>
    public ValueTask<PublishResult> ReplaceStateAsync(PublishTarget target, ReadOnlyMemory<byte> document, IdempotencyKey? idempotencyKey = null,
        CancellationToken cancellationToken = default)
    {
        if (document.Length == 0 || document.Length > _options.MaxMessageBytes)
        {
            return ValueTask.FromResult(new PublishResult(PublishStatus.InvalidSize));
        }
        if (!_topics.TryGetValue(target.TopicId, out var topic))
        {
            return ValueTask.FromResult(new PublishResult(PublishStatus.TopicNotFound));
        }
        if (!topic.HoldsState)
        {
            return ValueTask.FromResult(new PublishResult(PublishStatus.NotAStateTopic));
        }
        if (target.IfEpoch is { } epoch && epoch != topic.Epoch)
        {
            return ValueTask.FromResult(new PublishResult(PublishStatus.EpochMismatch, Epoch: topic.Epoch));
        }
        // A replacement does not depend on the document it replaces, so it is checked and made compact before the lock.
        var status = MergePatch.TryReplace(document.Span, _options.MaxStateBytes, out var compact);
        if (status != PublishStatus.Published)
        {
            return ValueTask.FromResult(new PublishResult(status));
        }
        var result = Keyed(idempotencyKey, 1, (Store: this, Topic: topic, Target: target, Compact: compact),
            static (replace, keyCost) => replace.Store.ReplaceOne(replace.Topic, replace.Target, replace.Compact, keyCost));
        return ValueTask.FromResult(result.Topics.Count > 0 ? result.Topics[0] : new PublishResult(result.Status, RetryAfter: result.RetryAfter));
    }

    /// <inheritdoc/>
    public ValueTask<MultiPublishResult> PublishManyAsync(ReadOnlyMemory<PublishTarget> targets, ReadOnlyMemory<byte> body, string contentType,
        IdempotencyKey? idempotencyKey = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(contentType);
        PublishTarget.ThrowIfInvalid(targets.Span, _options.MaxTopicsPerPublish);
        if (body.Length == 0 || body.Length > _options.MaxMessageBytes)
        {
            return ValueTask.FromResult(new MultiPublishResult(PublishStatus.InvalidSize, []));
        }
        if (!Message.IsValidContentType(contentType))
        {
            return ValueTask.FromResult(new MultiPublishResult(PublishStatus.InvalidContentType, []));
        }
        return ValueTask.FromResult(Keyed(idempotencyKey, targets.Length, (Store: this, targets, body, contentType),
            static (publish, keyCost) => publish.Store.PublishAll(publish.targets.Span, publish.body, publish.contentType, keyCost)));
    }

    /// <summary>Stores a replacement, checked and compact already, reserving its cost and <paramref name="keyCost"/>.</summary>
    private MultiPublishResult ReplaceOne(Topic topic, PublishTarget target, byte[] compact, long keyCost)
    {
        var traceContext = Message.PublisherTraceContext;
        var cost = keyCost + RetainedCost.Of(compact.Length, compact.Length, MergePatch.DocumentMediaType.Length, topic.Epoch.Length, traced: traceContext != default);
        if (!TryReserveOrSweep(cost))
        {
            return new MultiPublishResult(PublishStatus.StorageFull, [], RetryAfter: UntilOldestExpires());
        }
        var one = AppendOne(topic, StateWrite.Replace, target.IfVersion, MergePatch.DocumentMediaType, compact, traceContext);
        if (one.Status != PublishStatus.Published)
        {
            Interlocked.Add(ref _retainedBytes, -cost);
            return new MultiPublishResult(one.Status, [one], RetryAfter: one.RetryAfter);
        }
        _signals.SignalFromPublisher(target.TopicId);
        return new MultiPublishResult(PublishStatus.Published, [one]);
    }

    /// <summary>
    /// Runs <paramref name="publish"/> (given what recording the key costs, to reserve with its messages) under
    /// <paramref name="idempotencyKey"/>'s claim, recording its answer when it stored; or answers the key's replay or refusal.
    /// </summary>
    private MultiPublishResult Keyed<TState>(IdempotencyKey? idempotencyKey, int topics, TState state, Func<TState, long, MultiPublishResult> publish)
    {
        if (idempotencyKey is null)
        {
            return publish(state, 0);
        }
        var now = _timeProvider.GetUtcNow().UtcTicks;
        var key = IdempotencyRecords.Digest(idempotencyKey);
        switch (_idempotencyKeys.TryBegin(key, now, ref _retainedBytes, out var recorded))
        {
            case IdempotencyRecords.Claim.Replay:
                return new MultiPublishResult(PublishStatus.Published, recorded!, Replayed: true);
            case IdempotencyRecords.Claim.Mismatch:
                return new MultiPublishResult(PublishStatus.IdempotencyKeyMismatch, []);
            case IdempotencyRecords.Claim.InProgress:
                return new MultiPublishResult(PublishStatus.IdempotencyKeyInProgress, []);
            case IdempotencyRecords.Claim.Full:
                return new MultiPublishResult(PublishStatus.TooManyIdempotencyKeys, [], RetryAfter: _options.IdempotencyKeyLifetime);
        }
        var keyCost = IdempotencyRecords.CostOf(idempotencyKey, topics);
        MultiPublishResult result;
        try
        {
            result = publish(state, keyCost);
        }
        catch
        {
            _idempotencyKeys.Abandon(key);
            throw;
        }
        if (result.Status == PublishStatus.Published)
        {
            _idempotencyKeys.Complete(key, result.Topics, _timeProvider.GetUtcNow().UtcTicks, keyCost);
        }
        else
        {
            _idempotencyKeys.Abandon(key);
        }
        return result;
    }

    /// <summary>
    /// Appends the message to every target or to none: the targets' locks are all held (taken in id order)
    /// while they are checked and appended to, so no delete can come between. Their cost, and
    /// <paramref name="keyCost"/>, is reserved before the locks are taken, since a full store sweeps, which
    /// takes topic locks itself.
    /// </summary>
    private MultiPublishResult PublishAll(ReadOnlySpan<PublishTarget> targets, ReadOnlyMemory<byte> body, string contentType, long keyCost)
    {
        var count = targets.Length;
        var topics = new Topic?[count];
        var results = new PublishResult[count];
        for (var i = 0; i < count; i++)
        {
            topics[i] = _topics.TryGetValue(targets[i].TopicId, out var topic) ? topic : null;
        }
        if (Refusal(targets, topics, results, checkDeleted: false) is { } missing)
        {
            return missing;
        }
        var traceContext = Message.PublisherTraceContext;
        var cost = keyCost;
        foreach (var topic in topics)
        {
            // Each message counts the body's array, though they share one copy: counted high, never low.
            cost += RetainedCost.Of(body.Length, body.Length, contentType.Length, topic!.Epoch.Length, traced: traceContext != default);
        }
        if (!TryReserveOrSweep(cost))
        {
            return new MultiPublishResult(PublishStatus.StorageFull, [], RetryAfter: UntilOldestExpires());
        }
        var order = new int[count];
        for (var i = 0; i < count; i++)
        {
            order[i] = i;
        }
        var ids = new long[count];
        for (var i = 0; i < count; i++)
        {
            ids[i] = targets[i].TopicId;
        }
        Array.Sort(ids, order);
        var locked = 0;
        try
        {
            for (; locked < count; locked++)
            {
                topics[order[locked]]!.Enter();
            }
            if (Refusal(targets, topics, results, checkDeleted: true) is { } refusal)
            {
                Interlocked.Add(ref _retainedBytes, -cost);
                return refusal;
            }
            // One copy of the body for every topic: the messages never change it.
            var copy = RetainedArray.Copy(body.Span);
            var write = WriteOf(contentType);
            var documents = new ReadOnlyMemory<byte>?[count];
            var refused = PublishStatus.Published;
            long documentsChange = 0;
            for (var i = 0; i < count; i++)
            {
                var prepared = topics[i]!.PrepareLocked(write, targets[i].IfVersion, copy, _options.MaxStateBytes, out documents[i]);
                results[i] = prepared.Status == PublishStatus.Published ? new PublishResult(PublishStatus.NotAttempted) : prepared;
                refused = refused == PublishStatus.Published ? prepared.Status : refused;
                documentsChange += topics[i]!.DocumentCostChange(documents[i]);
            }
            if (refused != PublishStatus.Published || !TryChargeDocuments(documentsChange))
            {
                Interlocked.Add(ref _retainedBytes, -cost);
                return refused != PublishStatus.Published ? new MultiPublishResult(refused, results)
                    : new MultiPublishResult(PublishStatus.StorageFull, [], RetryAfter: UntilOldestExpires());
            }
            var now = _timeProvider.GetUtcNow();
            var threshold = ExpiryThreshold();
            for (var i = 0; i < count; i++)
            {
                var topic = topics[i]!;
                results[i] = new PublishResult(PublishStatus.Published,
                    topic.AppendLocked(StoredContentType(topic, contentType), copy, traceContext, now, threshold, _options.MaxMessagesPerTopic, this,
                        ref _retainedBytes, documents[i]), topic.Epoch);
            }
        }
        finally
        {
            while (locked > 0)
            {
                topics[order[--locked]]!.Exit();
            }
        }
        foreach (var target in targets)
        {
            _signals.SignalFromPublisher(target.TopicId);
        }
        return new MultiPublishResult(PublishStatus.Published, results);
    }

    /// <summary>
    /// The refusal of a publish to <paramref name="topics"/> (null where missing), naming each refusing topic in
    /// <paramref name="results"/>; null when every topic takes it. A missing topic outranks another epoch.
    /// </summary>
    private static MultiPublishResult? Refusal(ReadOnlySpan<PublishTarget> targets, Topic?[] topics, PublishResult[] results, bool checkDeleted)
    {
        var status = PublishStatus.Published;
        for (var i = 0; i < targets.Length; i++)
        {
            var topic = topics[i];
            if (topic is null || (checkDeleted && topic.IsDeletedLocked))
            {
                results[i] = new PublishResult(PublishStatus.TopicNotFound);
                status = PublishStatus.TopicNotFound;
            }
            else if (targets[i].IfEpoch is { } epoch && epoch != topic.Epoch)
            {
                results[i] = new PublishResult(PublishStatus.EpochMismatch, Epoch: topic.Epoch);
                status = status is PublishStatus.TopicNotFound or PublishStatus.PresenceTopic ? status : PublishStatus.EpochMismatch;
            }
            else if (topic.PresenceOf is not null)
            {
                results[i] = new PublishResult(PublishStatus.PresenceTopic);
                status = status == PublishStatus.TopicNotFound ? status : PublishStatus.PresenceTopic;
            }
            else
            {
                results[i] = new PublishResult(PublishStatus.NotAttempted);
            }
        }
        return status == PublishStatus.Published ? null : new MultiPublishResult(status, results);
    }

    /// <inheritdoc/>
    public ValueTask ReadAsync(ReadOnlyMemory<TopicReadRequest> requests, Memory<TopicReadResult> results, List<Message> messages,
        CancellationToken cancellationToken = default)
    {
        var now = _timeProvider.GetUtcNow().UtcTicks;
        var threshold = now - _options.MessageTimeToLive.Ticks;
        var requestSpan = requests.Span;
        var resultSpan = results.Span;
        for (var i = 0; i < requestSpan.Length; i++)
        {
            resultSpan[i] = _topics.TryGetValue(requestSpan[i].TopicId, out var topic)
                ? topic.Read(requestSpan[i], messages, now, threshold, ref _retainedBytes)
                : TopicReadResult.Missing;
        }
        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// Drops expired messages from every topic, and topics idle for <c>TopicIdleTimeToLive</c>; runs on
    /// a timer, and inline when the store is full.
    /// </summary>
    internal void Sweep()
    {
        var now = _timeProvider.GetUtcNow().UtcTicks;
        var threshold = now - _options.MessageTimeToLive.Ticks;
        var idleBefore = _options.TopicIdleTimeToLive > TimeSpan.Zero ? now - _options.TopicIdleTimeToLive.Ticks : long.MinValue;
        // Enumerating the dictionary itself takes no lock and copies nothing (.Values would do both).
        foreach (var (id, topic) in _topics)
        {
            if (topic.LastUsedTicks < idleBefore && topic.PresenceOf is null)
            {
                // No message and no poll for longer than any poll may wait: nobody is reading it. A presence
                // companion goes with its topic only: its subscribers' use does not show on the topic.
                _ = DeleteTopicAsync(id);
            }
            else if (topic.MayHoldMessages)
            {
                topic.Expire(threshold, ref _retainedBytes);
            }
        }
        _idempotencyKeys.Sweep(now, ref _retainedBytes);
    }

    /// <summary>Stops the sweep timer.</summary>
    public void Dispose() => _sweepTimer.Dispose();

    /// <summary>How long until the oldest retained message expires and frees room: the honest Retry-After of a 507.</summary>
    private TimeSpan UntilOldestExpires()
    {
        DateTimeOffset? oldest = null;
        foreach (var (_, topic) in _topics)
        {
            if (topic.OldestPublishedAt is { } at && (oldest is null || at < oldest))
            {
                oldest = at;
            }
        }
        var wait = oldest is { } o ? o + _options.MessageTimeToLive - _timeProvider.GetUtcNow() : _options.MessageTimeToLive;
        return wait < TimeSpan.FromSeconds(1) ? TimeSpan.FromSeconds(1) : wait;
    }

    /// <summary>A retained message's encoding, charged when made beyond what its publish reserved; never sweeps.</summary>
    bool IRetentionBudget.TryCharge(long bytes) => TryReserve(bytes);

    /// <inheritdoc/>
    void IRetentionBudget.Release(long bytes) => Interlocked.Add(ref _retainedBytes, -bytes);

    /// <summary>Reserves <paramref name="bytes"/>; when full, sweeps expired messages first so a full server frees what it can.</summary>
    private bool TryReserveOrSweep(long bytes)
    {
        if (TryReserve(bytes))
        {
            return true;
        }
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
        return TryReserve(bytes);
    }

    private bool TryReserve(long bytes)
    {
        if (Interlocked.Add(ref _retainedBytes, bytes) <= _options.MaxRetainedBytes)
        {
            return true;
        }
        Interlocked.Add(ref _retainedBytes, -bytes);
        return false;
    }

    private long ExpiryThreshold() => _timeProvider.GetUtcNow().UtcTicks - _options.MessageTimeToLive.Ticks;
}
