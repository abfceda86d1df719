using System.Collections.Concurrent;

namespace Laharsub.Server.Storage.InMemory;

// Presence: the members of each topic created with presence, by topic id (IPresenceStore's contract).
internal sealed partial class InMemoryStore
{
    private readonly ConcurrentDictionary<long, PresenceRoom> _rooms = new();

    /// <inheritdoc/>
    public ValueTask<TopicInfo?> CreateTopicWithPresenceAsync(string? label = null, bool state = false, CancellationToken cancellationToken = default)
    {
        if (Interlocked.Add(ref _topicCount, 2) > _options.MaxTopics)
        {
            Interlocked.Add(ref _topicCount, -2);
            return ValueTask.FromResult<TopicInfo?>(null);
        }
        var companionId = Interlocked.Add(ref _lastTopicId, 2);
        var now = _timeProvider.GetUtcNow();
        var topic = new Topic(companionId - 1, NewEpoch(), now, label, presenceTopicId: companionId, state: state);
        Interlocked.Add(ref _retainedBytes, topic.DocumentCost);
        // The companion and the room first: whoever sees the topic finds them.
        _topics[companionId] = new Topic(companionId, NewEpoch(), now, presenceOf: topic.Id);
        _rooms[topic.Id] = new PresenceRoom(companionId);
        _topics[topic.Id] = topic;
        return ValueTask.FromResult<TopicInfo?>(topic.GetInfo(ExpiryThreshold(), ref _retainedBytes));
    }

    /// <inheritdoc/>
    public ValueTask<PresenceRenewal> RenewAsync(long topicId, string member, string? data, DateTimeOffset expiresAt, int maxMembers,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(member);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMembers);
        if (!_rooms.TryGetValue(topicId, out var room))
        {
            return ValueTask.FromResult(new PresenceRenewal(_topics.ContainsKey(topicId) ? PresenceStatus.NoPresence : PresenceStatus.TopicNotFound, false, 0, 0));
        }
        var (status, joined, occupancy) = room.Renew(member, data, expiresAt.UtcTicks, maxMembers);
        return ValueTask.FromResult(new PresenceRenewal(status, joined, occupancy, room.PresenceTopicId));
    }

    /// <inheritdoc/>
    public ValueTask<PresencePage?> ListMembersAsync(long topicId, string? afterMember, int limit, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        return ValueTask.FromResult(_rooms.TryGetValue(topicId, out var room) ? room.List(afterMember, limit) : null);
    }

    /// <inheritdoc/>
    public ValueTask<PublishResult> PublishEventAsync(long presenceTopicId, ReadOnlyMemory<byte> body, CancellationToken cancellationToken = default) =>
        ValueTask.FromResult(Publish(presenceTopicId, body, "application/json", ifEpoch: null, presenceEvent: true));

    /// <inheritdoc/>
    public ValueTask<IReadOnlyList<PresenceDeparture>> SweepAsync(DateTimeOffset now, int limit, CancellationToken cancellationToken = default)
    {
        var departures = new List<PresenceDeparture>();
        foreach (var (topicId, room) in _rooms)
        {
            if (departures.Count >= limit)
            {
                break;
            }
            room.Sweep(topicId, now.UtcTicks, limit, departures);
        }
        return ValueTask.FromResult<IReadOnlyList<PresenceDeparture>>(departures);
    }
}
