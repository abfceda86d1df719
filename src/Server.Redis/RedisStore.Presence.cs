using Laharsub.Server.Storage;
using StackExchange.Redis;

namespace Laharsub.Server.Redis;

// Presence on Redis (IPresenceStore's contract): the layout and why it is per bucket are in RedisPresenceScripts' remarks.
internal sealed partial class RedisStore
{
    /// <inheritdoc/>
    public ValueTask<TopicInfo?> CreateTopicWithPresenceAsync(string? label = null, bool state = false, CancellationToken cancellationToken = default) =>
        state ? throw StateNotSupported() : CreateAsync(label, presence: true);

    /// <inheritdoc/>
    public async ValueTask<PresenceRenewal> RenewAsync(long topicId, string member, string? data, DateTimeOffset expiresAt, int maxMembers,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(member);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMembers);
        var bucket = BucketOf(topicId);
        var result = (RedisResult[])(await RunAsync(RedisPresenceScripts.Renew,
            [MetaKey(topicId), bucket.PresenceMembers, bucket.PresenceExpiry, bucket.PresenceData],
            [topicId, member, data ?? "", expiresAt.ToUnixTimeMilliseconds(), maxMembers]).ConfigureAwait(false))!;
        return (long)result[0] switch
        {
            1 => new PresenceRenewal(PresenceStatus.TopicNotFound, false, 0, 0),
            2 => new PresenceRenewal(PresenceStatus.NoPresence, false, 0, 0),
            3 => new PresenceRenewal(PresenceStatus.Full, false, (int)(long)result[1], (long)result[2]),
            _ => new PresenceRenewal(PresenceStatus.Done, (long)result[1] == 1, (int)(long)result[2], (long)result[3]),
        };
    }

    /// <inheritdoc/>
    public async ValueTask<PresencePage?> ListMembersAsync(long topicId, string? afterMember, int limit, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var bucket = BucketOf(topicId);
        var result = await RunAsync(RedisPresenceScripts.ListMembers, [MetaKey(topicId), bucket.PresenceMembers, bucket.PresenceData],
            [topicId, afterMember ?? "", limit]).ConfigureAwait(false);
        if (result.IsNull)
        {
            return null;
        }
        var values = (RedisResult[])result!;
        var members = new List<PresenceMember>((values.Length - 2) / 2);
        for (var i = 2; i < values.Length; i += 2)
        {
            members.Add(new PresenceMember((string)values[i]!, DataOf(values[i + 1])));
        }
        return new PresencePage((int)(long)values[0], members, (long)values[1] == 1);
    }

    /// <inheritdoc/>
    public ValueTask<PublishResult> PublishEventAsync(long presenceTopicId, ReadOnlyMemory<byte> body, CancellationToken cancellationToken = default) =>
        PublishAsync(presenceTopicId, body, "application/json", ifEpoch: null, presenceEvent: true);

    /// <inheritdoc/>
    public async ValueTask<IReadOnlyList<PresenceDeparture>> SweepAsync(DateTimeOffset now, int limit, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        var departures = new List<PresenceDeparture>();
        // Bucket by bucket, each one script: whatever it removed is this call's alone, whichever instance sweeps too.
        foreach (var bucket in _buckets)
        {
            if (departures.Count >= limit)
            {
                break;
            }
            var values = (RedisResult[])(await RunAsync(RedisPresenceScripts.Sweep, [bucket.PresenceMembers, bucket.PresenceExpiry, bucket.PresenceData],
                [now.ToUnixTimeMilliseconds(), limit - departures.Count]).ConfigureAwait(false))!;
            for (var i = 0; i < values.Length; i += 4)
            {
                var topicId = (long)values[i];
                departures.Add(new PresenceDeparture(topicId, CompanionOf(topicId), (string)values[i + 1]!, DataOf(values[i + 2]), (int)(long)values[i + 3]));
            }
        }
        return departures;
    }

    /// <summary>The companion topic a topic with presence has (<see cref="RedisPresenceScripts"/>' remarks), whether or not it has one.</summary>
    private long CompanionOf(long topicId) => topicId + _buckets.Length;

    private static string? DataOf(RedisResult stored)
    {
        var data = (string?)stored;
        return string.IsNullOrEmpty(data) ? null : data;
    }
}
