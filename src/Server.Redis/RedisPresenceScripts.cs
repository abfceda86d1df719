namespace Laharsub.Server.Redis;

/// <summary>
/// The Lua scripts of presence on Redis (IPresenceStore's contract; docs/scale-out.md, "Presence on Redis").
/// </summary>
/// <remarks>
/// A topic with presence and its companion topic live in one bucket: their ids are reserved together
/// (<c>INCRBY topic-ids Buckets+1</c> gives <c>n</c>; the topic is <c>n - Buckets</c>, the companion <c>n</c>),
/// so the companion of topic <c>id</c> is always <c>id + Buckets</c>, and every script below, and the delete,
/// touch one bucket. The topic's hash holds <c>presence</c> (the companion's id), the companion's
/// <c>presenceOf</c> (the topic's id). Members are kept per bucket, each under the field
/// <c>{topic id}:{member}</c>, in three keys: <c>presence:members</c> (sorted set, every score 0, so that
/// ZRANGEBYLEX pages a topic's members in byte order and ZLEXCOUNT counts them without a counter to keep
/// right), <c>presence:expiry</c> (sorted set by lease expiry, Unix ms of the callers' clocks) and
/// <c>presence:data</c> (hash, the member's JSON; no field without data). Per bucket rather than per topic
/// so that the sweep is one script per bucket that declares every key it touches: it removes each expired
/// member in one atomic step, so each goes to exactly one sweeping instance. A topic id is digits, so the
/// range <c>[{id}:</c> to <c>({id};</c> holds exactly that topic's fields.
/// </remarks>
internal static class RedisPresenceScripts
{
    /// <summary>
    /// KEYS: topics, used, era, meta of the topic, meta of the companion, retained, document of the topic. ARGV: max topics
    /// of the bucket, epoch of the topic, epoch of the companion, track use (1/0), label ('' for none), topic id, companion id,
    /// state of the topic (1/0; a companion never holds state). Creates both or neither, counting two against the bucket's
    /// share of MaxTopics; the companion is not tracked for idle deletion (it goes with its topic). Returns {id, createdMs, epoch}, nil when the
    /// bucket has no room for two, or {-1} when either id is taken (the caller reserves the next pair).
    /// </summary>
    public const string CreateTopicWithPresence = RedisScripts.Common + """
        if redis.call('EXISTS', KEYS[4]) == 1 or redis.call('EXISTS', KEYS[5]) == 1 then return {-1} end
        if redis.call('ZCARD', KEYS[1]) + 2 > tonumber(ARGV[1]) then return nil end
        local gen = era_gen(KEYS[3])
        local created = now_ms()
        redis.call('HSET', KEYS[4], 'epoch', ARGV[2], 'created', created, 'last', 0, 'bytes', 0, 'body', 0, 'presence', ARGV[7])
        if ARGV[5] ~= '' then redis.call('HSET', KEYS[4], 'label', ARGV[5]) end
        if ARGV[8] == '1' then start_state(KEYS[4], KEYS[7], KEYS[6]) end
        redis.call('HSET', KEYS[5], 'epoch', ARGV[3], 'created', created, 'last', 0, 'bytes', 0, 'body', 0, 'presenceOf', ARGV[6])
        redis.call('ZADD', KEYS[1], ARGV[6], ARGV[6], ARGV[7], ARGV[7])
        if ARGV[4] == '1' then redis.call('ZADD', KEYS[2], created, ARGV[6]) end
        return {tonumber(ARGV[6]), created, era_epoch(ARGV[2], gen)}
        """;

    /// <summary>
    /// KEYS: meta of the topic, presence members, expiry, data. ARGV: topic id, member, data ('' for none),
    /// expiry (Unix ms), max members. Keeps the later of the held and the new expiry, so a release never cuts another
    /// tab's lease, and an expired member the sweep has not removed yet is renewed, not joined again. A member
    /// not present yet is not added when the topic has max members already.
    /// Returns {0, joined (1/0), occupancy, companion id}, {1} when the topic does not exist, {2} when it has no presence,
    /// {3, occupancy, companion id} when it is full (nothing written).
    /// </summary>
    public const string Renew = """
        local companion = redis.call('HGET', KEYS[1], 'presence')
        if not companion then
          if redis.call('EXISTS', KEYS[1]) == 1 then return {2} end
          return {1}
        end
        local field = ARGV[1] .. ':' .. ARGV[2]
        local expires = tonumber(ARGV[4])
        local held = redis.call('ZSCORE', KEYS[3], field)
        local joined = 1
        if held then
          joined = 0
          expires = math.max(tonumber(held), expires)
        else
          local occupancy = redis.call('ZLEXCOUNT', KEYS[2], '[' .. ARGV[1] .. ':', '(' .. ARGV[1] .. ';')
          if occupancy >= tonumber(ARGV[5]) then return {3, occupancy, tonumber(companion)} end
        end
        redis.call('ZADD', KEYS[2], 0, field)
        redis.call('ZADD', KEYS[3], expires, field)
        if ARGV[3] ~= '' then redis.call('HSET', KEYS[4], field, ARGV[3]) else redis.call('HDEL', KEYS[4], field) end
        return {0, joined, redis.call('ZLEXCOUNT', KEYS[2], '[' .. ARGV[1] .. ':', '(' .. ARGV[1] .. ';'), tonumber(companion)}
        """;

    /// <summary>
    /// KEYS: meta of the topic, presence members, data. ARGV: topic id, after member ('' for the first page), limit.
    /// Returns nil when the topic does not exist or has no presence, else {occupancy, has more (1/0), member, data ('' for none), ...}.
    /// </summary>
    public const string ListMembers = """
        if not redis.call('HGET', KEYS[1], 'presence') then return nil end
        local prefix = ARGV[1] .. ':'
        local from = '[' .. prefix
        if ARGV[2] ~= '' then from = '(' .. prefix .. ARGV[2] end
        local to = '(' .. ARGV[1] .. ';'
        local limit = tonumber(ARGV[3])
        local fields = redis.call('ZRANGEBYLEX', KEYS[2], from, to, 'LIMIT', 0, limit + 1)
        local more = 0
        if #fields > limit then
          more = 1
          fields[#fields] = nil
        end
        local result = {redis.call('ZLEXCOUNT', KEYS[2], '[' .. prefix, to), more}
        if #fields > 0 then
          local data = redis.call('HMGET', KEYS[3], unpack(fields))
          for i = 1, #fields do
            result[#result + 1] = string.sub(fields[i], #prefix + 1)
            result[#result + 1] = data[i] or ''
          end
        end
        return result
        """;

    /// <summary>
    /// KEYS: presence members, expiry, data (of one bucket). ARGV: now (Unix ms), limit. Removes up to limit
    /// members whose leases expired at or before now, atomically, and returns them as {topic id, member, data
    /// ('' for none), occupancy after, ...}: each to this call only.
    /// </summary>
    public const string Sweep = """
        local fields = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
        local result = {}
        for _, field in ipairs(fields) do
          local colon = string.find(field, ':', 1, true)
          local topic = string.sub(field, 1, colon - 1)
          local data = redis.call('HGET', KEYS[3], field)
          redis.call('ZREM', KEYS[1], field)
          redis.call('ZREM', KEYS[2], field)
          redis.call('HDEL', KEYS[3], field)
          result[#result + 1] = tonumber(topic)
          result[#result + 1] = string.sub(field, colon + 1)
          result[#result + 1] = data or ''
          result[#result + 1] = redis.call('ZLEXCOUNT', KEYS[1], '[' .. topic .. ':', '(' .. topic .. ';')
        end
        return result
        """;
}
