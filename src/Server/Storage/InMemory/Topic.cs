using Laharsub.Server.Wire;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// One topic of the in-memory backend: its message log, its last id and its waiting polls, all
/// guarded by the topic's own lock. There is no lock wider than a topic on the publish or delivery path.
/// </summary>
internal sealed class Topic(long id, DateTimeOffset createdAt, string? label = null)
{
    private readonly Lock _lock = new();
    private readonly MessageLog _log = new();
    private PollWaiter.Registration? _firstWaiter;
    private int _waitingPolls;
    private long _lastMessageId;
    private bool _deleted;

    public long Id { get; } = id;
    public DateTimeOffset CreatedAt { get; } = createdAt;

    public string? Label { get; } = label;

    /// <summary>Whether the topic holds messages; read without the lock, so only a hint for sweeping.</summary>
    public bool MayHoldMessages => _log.Count > 0;

    public TopicInfo GetInfo(long expiredAtOrBeforeTicks, ref long retainedBytes)
    {
        lock (_lock)
        {
            ExpireLocked(expiredAtOrBeforeTicks, ref retainedBytes);
            return new TopicInfo(Id, CreatedAt, _lastMessageId, FirstRetainedIdLocked(), _log.Count, _log.Bytes, _waitingPolls, Label);
        }
    }

    /// <summary>
    /// Appends a message (the caller has already reserved its bytes in <paramref name="retainedBytes"/>)
    /// and wakes every poll waiting on the topic. Returns 0 if the topic was deleted meanwhile.
    /// </summary>
    public long Publish(WireFormat wire, string contentType, ReadOnlySpan<byte> body, DateTimeOffset now,
        long expiredAtOrBeforeTicks, int maxMessages, ref long retainedBytes)
    {
        lock (_lock)
        {
            if (_deleted)
            {
                return 0;
            }
            ExpireLocked(expiredAtOrBeforeTicks, ref retainedBytes);
            if (_log.Count >= maxMessages)
            {
                Interlocked.Add(ref retainedBytes, -_log.RemoveOldest());
            }
            // Encoding happens under the lock because both wire forms carry the id, and ids must be
            // appended in the order they are assigned. For the small messages pub/sub carries this
            // costs less than a second pass over the body outside the lock would.
            var message = wire.Encode(Id, _lastMessageId + 1, now, contentType, body);
            _lastMessageId++;
            _log.Append(message);
            WakeAllLocked();
            return _lastMessageId;
        }
    }

    /// <summary>Deletes the topic, wakes its waiters and returns the bytes it released.</summary>
    public long Delete()
    {
        lock (_lock)
        {
            _deleted = true;
            WakeAllLocked();
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

    /// <summary>
    /// Adds what this topic has for the cursor to the poll's notices and messages, within both the
    /// response's <paramref name="budget"/> and this topic's <paramref name="share"/> of it, and moves the
    /// cursor past what it took. Resolves an absent cursor to the next message to be published. Returns
    /// whether it took everything or what stopped it.
    /// </summary>
    public CollectOutcome Collect(ref long cursor, ref PollBudget budget, PollBudget share, ref List<PollNotice>? notices,
        ref List<Message>? messages, long expiredAtOrBeforeTicks, ref long retainedBytes)
    {
        lock (_lock)
        {
            if (_deleted)
            {
                (notices ??= []).Add(new PollNotice(PollNoticeKind.TopicDeleted, Id));
                return CollectOutcome.Complete;
            }
            ExpireLocked(expiredAtOrBeforeTicks, ref retainedBytes);
            if (cursor == 0)
            {
                cursor = _lastMessageId + 1;
                return CollectOutcome.Complete;
            }

            var first = FirstRetainedIdLocked();
            if (cursor > _lastMessageId + 1)
            {
                (notices ??= []).Add(new PollNotice(PollNoticeKind.Reset, Id, FromMessageId: cursor, ToMessageId: _lastMessageId, FirstMessageId: first));
                cursor = first;
            }
            else if (cursor < first)
            {
                (notices ??= []).Add(new PollNotice(PollNoticeKind.Gap, Id, FromMessageId: cursor, ToMessageId: first - 1));
                cursor = first;
            }

            for (var index = (int)(cursor - first); index < _log.Count; index++)
            {
                var message = _log[index];
                if (!share.TryTake(message.Body.Length))
                {
                    return CollectOutcome.ShareFull;
                }
                if (!budget.TryTake(message.Body.Length))
                {
                    return CollectOutcome.ResponseFull;
                }
                (messages ??= []).Add(message);
                cursor = message.MessageId + 1;
            }
            return CollectOutcome.Complete;
        }
    }

    /// <summary>
    /// Registers a waiting poll whose cursor is <paramref name="cursor"/>; returns false, registering
    /// nothing, when the topic already has something for it (or is gone) and the poll should not wait.
    /// </summary>
    public bool TryRegister(PollWaiter waiter, int slot, long cursor)
    {
        lock (_lock)
        {
            if (_deleted || cursor != _lastMessageId + 1)
            {
                return false;
            }
            var registration = new PollWaiter.Registration(waiter) { Next = _firstWaiter, IsLinked = true };
            if (_firstWaiter is not null)
            {
                _firstWaiter.Previous = registration;
            }
            _firstWaiter = registration;
            _waitingPolls++;
            waiter.Registrations[slot] = registration;
            return true;
        }
    }

    public void Unregister(PollWaiter.Registration registration)
    {
        // A publish unlinks every waiter it wakes, so the woken poll usually skips the lock here.
        if (!registration.IsLinked)
        {
            return;
        }
        lock (_lock)
        {
            if (!registration.IsLinked)
            {
                return;
            }
            if (registration.Previous is null)
            {
                _firstWaiter = registration.Next;
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
            _waitingPolls--;
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

    private void WakeAllLocked()
    {
        var registration = _firstWaiter;
        while (registration is not null)
        {
            var next = registration.Next;
            registration.IsLinked = false;
            registration.Previous = registration.Next = null;
            registration.Waiter.Wake();
            registration = next;
        }
        _firstWaiter = null;
        _waitingPolls = 0;
    }
}
