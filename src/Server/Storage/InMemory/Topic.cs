using System.Diagnostics;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// One topic of the in-memory store: its message log and last id, guarded by the topic's own lock.
/// There is no lock wider than a topic on the publish or read path.
/// </summary>
internal sealed class Topic(long id, string epoch, DateTimeOffset createdAt, string? label = null, long? presenceTopicId = null, long? presenceOf = null)
{
    private readonly Lock _lock = new();
    private readonly MessageLog _log = new();
    private long _lastMessageId;
    private long _lastUsedTicks = createdAt.UtcTicks;
    private bool _deleted;

    public long Id { get; } = id;
    public string Epoch { get; } = epoch;
    public DateTimeOffset CreatedAt { get; } = createdAt;

    public string? Label { get; } = label;

    /// <summary>The companion topic of a topic with presence.</summary>
    public long? PresenceTopicId { get; } = presenceTopicId;

    /// <summary>For a companion topic, the topic whose presence it holds.</summary>
    public long? PresenceOf { get; } = presenceOf;

    /// <summary>Whether the topic holds messages; read without the lock, so only a hint for sweeping.</summary>
    public bool MayHoldMessages => _log.Count > 0;

    /// <summary>When a message was last published to or read from the topic (or it was created); read without the lock.</summary>
    public long LastUsedTicks => Volatile.Read(ref _lastUsedTicks);

    /// <summary>When the oldest retained message was published, if any; read without the lock, a hint for Retry-After.</summary>
    public DateTimeOffset? OldestPublishedAt => _log.Count > 0 ? _log.Oldest.PublishedAt : null;

    public TopicInfo GetInfo(long expiredAtOrBeforeTicks, ref long retainedBytes)
    {
        lock (_lock)
        {
            ExpireLocked(expiredAtOrBeforeTicks, ref retainedBytes);
            return new TopicInfo(Id, Epoch, CreatedAt, _lastMessageId, FirstRetainedIdLocked(), _log.Count, _log.Bytes, Label, PresenceTopicId, PresenceOf);
        }
    }

    /// <summary>
    /// Appends a message (the caller has already reserved its <see cref="RetainedCost"/> in <paramref name="retainedBytes"/>;
    /// its encodings' further charges go to <paramref name="budget"/>).
    /// Returns 0 if the topic was deleted meanwhile.
    /// </summary>
    public long Publish(string contentType, byte[] body, ActivityContext traceContext, DateTimeOffset now, long expiredAtOrBeforeTicks, int maxMessages,
        IRetentionBudget budget, ref long retainedBytes)
    {
        lock (_lock)
        {
            return _deleted ? 0 : AppendLocked(contentType, body, traceContext, now, expiredAtOrBeforeTicks, maxMessages, budget, ref retainedBytes);
        }
    }

    /// <summary>
    /// Takes the topic's lock for a publish to several topics, which holds the locks of all of them (taken in
    /// topic id order, so two such publishes cannot deadlock) while it checks them and appends.
    /// </summary>
    public void Enter() => _lock.Enter();

    /// <summary>Releases the lock <see cref="Enter"/> took.</summary>
    public void Exit() => _lock.Exit();

    /// <summary>Whether the topic was deleted; under the lock <see cref="Enter"/> took.</summary>
    public bool IsDeletedLocked => _deleted;

    /// <summary>Appends a message under the lock <see cref="Enter"/> took, to a topic not deleted; returns its id.</summary>
    public long AppendLocked(string contentType, byte[] body, ActivityContext traceContext, DateTimeOffset now, long expiredAtOrBeforeTicks, int maxMessages,
        IRetentionBudget budget, ref long retainedBytes)
    {
        ExpireLocked(expiredAtOrBeforeTicks, ref retainedBytes);
        _lastUsedTicks = now.UtcTicks;
        if (_log.Count >= maxMessages)
        {
            Interlocked.Add(ref retainedBytes, -_log.RemoveOldest());
        }
        // The id is assigned and the message appended under one lock, so ids are appended in order.
        var message = new Message(Id, Epoch, _lastMessageId + 1, now, contentType, body, traceContext);
        message.CountAgainst(budget);
        _lastMessageId++;
        _log.Append(message);
        return _lastMessageId;
    }

    /// <summary>Deletes the topic and returns the bytes it released.</summary>
    public long Delete()
    {
        lock (_lock)
        {
            _deleted = true;
            return _log.Clear();
        }
    }

    /// <summary>Drops expired messages.</summary>
    public void Expire(long expiredAtOrBeforeTicks, ref long retainedBytes)
    {
        lock (_lock)
        {
            ExpireLocked(expiredAtOrBeforeTicks, ref retainedBytes);
        }
    }

    /// <summary>Reads the topic's state and the messages <paramref name="request"/> asks for; see <see cref="ILaharsubStore.ReadAsync"/>.</summary>
    public TopicReadResult Read(in TopicReadRequest request, List<Message> messages, long nowTicks, long expiredAtOrBeforeTicks, ref long retainedBytes)
    {
        lock (_lock)
        {
            if (_deleted)
            {
                return TopicReadResult.Missing;
            }
            _lastUsedTicks = nowTicks;
            ExpireLocked(expiredAtOrBeforeTicks, ref retainedBytes);
            var first = FirstRetainedIdLocked();
            var count = 0;
            long bytes = 0;
            // Clamped as a long first: a cursor far beyond the log (from=9223372036854775807) would wrap to a negative int.
            for (var index = (int)Math.Clamp(request.FromMessageId - first, 0, _log.Count);
                 index < _log.Count && count < request.MaxMessages && bytes < request.MaxBytes;
                 index++)
            {
                var message = _log[index];
                messages.Add(message);
                count++;
                bytes += message.Body.Length;
            }
            return new TopicReadResult(true, Epoch, _lastMessageId, first, count);
        }
    }

    private long FirstRetainedIdLocked() => _log.Count > 0 ? _log.FirstId : _lastMessageId + 1;

    private void ExpireLocked(long expiredAtOrBeforeTicks, ref long retainedBytes)
    {
        long released = 0;
        while (_log.Count > 0 && _log.Oldest.PublishedAt.UtcTicks <= expiredAtOrBeforeTicks)
        {
            released += _log.RemoveOldest();
        }
        if (released != 0)
        {
            Interlocked.Add(ref retainedBytes, -released);
        }
    }
}
