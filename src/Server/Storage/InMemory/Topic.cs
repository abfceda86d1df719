using System.Diagnostics;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// One topic of the in-memory store: its message log and last id, guarded by the topic's own lock.
/// There is no lock wider than a topic on the publish or read path.
/// </summary>
internal sealed class Topic(long id, string epoch, DateTimeOffset createdAt, string? label = null, long? presenceTopicId = null, long? presenceOf = null,
    bool state = false)
{
    private readonly Lock _lock = new();
    private readonly MessageLog _log = new();

    /// <summary>A state topic's document (compact JSON), at version <see cref="_lastMessageId"/>; never null on a state topic, always on another.</summary>
    private ReadOnlyMemory<byte>? _document = state ? MergePatch.EmptyDocument : default(ReadOnlyMemory<byte>?);
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

    /// <summary>Whether the topic holds state (a document); fixed at creation.</summary>
    public bool HoldsState { get; } = state;

    /// <summary>What the document costs against <c>MaxRetainedBytes</c>; 0 on a topic without state.</summary>
    public long DocumentCost => _document is { } document ? RetainedCost.OfDocument(document.Length) : 0;

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
            return new TopicInfo(Id, Epoch, CreatedAt, _lastMessageId, FirstRetainedIdLocked(), _log.Count, _log.Bytes, Label, PresenceTopicId, PresenceOf,
                HoldsState);
        }
    }

    /// <summary>
    /// Under the lock <see cref="Enter"/> took: whether a write may be appended, and on a state topic the document it
    /// makes (<paramref name="document"/>, for <see cref="AppendLocked"/> to keep): checks what it is against what the
    /// topic holds, then <paramref name="ifVersion"/>, then applies it. For a replacement, <paramref name="body"/> is the
    /// compact document already.
    /// </summary>
    public PublishResult PrepareLocked(StateWrite write, long? ifVersion, ReadOnlyMemory<byte> body, int maxStateBytes, out ReadOnlyMemory<byte>? document)
    {
        document = null;
        if (_document is null)
        {
            if (write == StateWrite.Replace)
            {
                return new PublishResult(PublishStatus.NotAStateTopic);
            }
        }
        else if (write == StateWrite.Message)
        {
            return new PublishResult(PublishStatus.NotAPatch);
        }
        if (ifVersion is { } version && version != _lastMessageId)
        {
            return new PublishResult(PublishStatus.VersionMismatch, _lastMessageId, Epoch);
        }
        if (_document is not { } old)
        {
            return new PublishResult(PublishStatus.Published);
        }
        if (write == StateWrite.Replace)
        {
            document = body;
            return new PublishResult(PublishStatus.Published);
        }
        var status = MergePatch.TryApply(old.Span, body.Span, maxStateBytes, out var patched);
        document = patched;
        return new PublishResult(status);
    }

    /// <summary>How much more (or less, when negative) the topic costs once <paramref name="document"/> replaces its document.</summary>
    public long DocumentCostChange(ReadOnlyMemory<byte>? document) =>
        document is { } replacement ? RetainedCost.OfDocument(replacement.Length) - DocumentCost : 0;

    /// <summary>
    /// Takes the topic's lock for a publish to several topics, which holds the locks of all of them (taken in
    /// topic id order, so two such publishes cannot deadlock) while it checks them and appends.
    /// </summary>
    public void Enter() => _lock.Enter();

    /// <summary>Releases the lock <see cref="Enter"/> took.</summary>
    public void Exit() => _lock.Exit();

    /// <summary>Whether the topic was deleted; under the lock <see cref="Enter"/> took.</summary>
    public bool IsDeletedLocked => _deleted;

    /// <summary>
    /// Appends a message under the lock <see cref="Enter"/> took, to a topic not deleted, and keeps <paramref name="document"/>
    /// (from <see cref="PrepareLocked"/>, its cost change charged already) as its new version; returns the message's id.
    /// </summary>
    public long AppendLocked(string contentType, byte[] body, ActivityContext traceContext, DateTimeOffset now, long expiredAtOrBeforeTicks, int maxMessages,
        IRetentionBudget budget, ref long retainedBytes, ReadOnlyMemory<byte>? document = null)
    {
        if (document is not null)
        {
            _document = document;
        }
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
            return _log.Clear() + DocumentCost;
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
            if (request.WithDocument && _document is { } document)
            {
                return new TopicReadResult(true, Epoch, _lastMessageId, first, 0, State: true, Document: document);
            }
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
            return new TopicReadResult(true, Epoch, _lastMessageId, first, count, HoldsState);
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

/// <summary>What a write to a topic is, for a state topic's rules: an ordinary message, a merge patch, or a whole document.</summary>
internal enum StateWrite
{
    Message,
    Patch,
    Replace,
}
