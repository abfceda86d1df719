namespace Laharsub.Server.Storage.InMemory;

/// <summary>The members of one topic with presence, each with its lease's expiry, in ordinal order of their ids.</summary>
internal sealed class PresenceRoom(long presenceTopicId)
{
    private readonly Lock _lock = new();
    private readonly SortedList<string, (string? Data, long ExpiresTicks)> _members = new(StringComparer.Ordinal);

    public long PresenceTopicId { get; } = presenceTopicId;

    /// <summary>Renews the member, or adds it unless the room has <paramref name="maxMembers"/>; whether it joined, and the occupancy after.</summary>
    public (PresenceStatus Status, bool Joined, int Occupancy) Renew(string member, string? data, long expiresTicks, int maxMembers)
    {
        lock (_lock)
        {
            var joined = !_members.TryGetValue(member, out var held);
            if (joined && _members.Count >= maxMembers)
            {
                return (PresenceStatus.Full, false, _members.Count);
            }
            // A release's shorter lease never cuts a longer one that another tab's renewal set.
            _members[member] = (data, joined ? expiresTicks : Math.Max(held.ExpiresTicks, expiresTicks));
            return (PresenceStatus.Done, joined, _members.Count);
        }
    }

    public PresencePage List(string? afterMember, int limit)
    {
        lock (_lock)
        {
            var keys = _members.Keys;
            var start = 0;
            if (afterMember is not null)
            {
                // Binary search for the first id after afterMember: keyset paging without a walk.
                int low = 0, high = keys.Count;
                while (low < high)
                {
                    var middle = (low + high) / 2;
                    if (string.CompareOrdinal(keys[middle], afterMember) <= 0)
                    {
                        low = middle + 1;
                    }
                    else
                    {
                        high = middle;
                    }
                }
                start = low;
            }
            var end = (int)Math.Min((long)start + limit, keys.Count);
            var page = new List<PresenceMember>(end - start);
            for (var i = start; i < end; i++)
            {
                page.Add(new PresenceMember(keys[i], _members.Values[i].Data));
            }
            return new PresencePage(_members.Count, page, end < keys.Count);
        }
    }

    /// <summary>Removes members expired at <paramref name="nowTicks"/>, up to <paramref name="limit"/>, into <paramref name="departures"/>.</summary>
    public void Sweep(long topicId, long nowTicks, int limit, List<PresenceDeparture> departures)
    {
        lock (_lock)
        {
            for (var i = _members.Count - 1; i >= 0 && departures.Count < limit; i--)
            {
                var (data, expires) = _members.Values[i];
                if (expires <= nowTicks)
                {
                    var member = _members.Keys[i];
                    _members.RemoveAt(i);
                    departures.Add(new PresenceDeparture(topicId, PresenceTopicId, member, data, _members.Count));
                }
            }
        }
    }
}
