namespace Laharsub.Server.Redis;

/// <summary>
/// The Lua scripts of the Redis store. Each runs atomically in Redis, so an id is assigned and its
/// message appended in one step, and a read sees a topic's state and messages as one snapshot, whatever
/// the other instances do meanwhile. Times come from Redis's own clock (TIME), so that every instance
/// agrees on when a message expires.
/// </summary>
/// <remarks>
/// Key layout: topics live in <c>Buckets</c> buckets (topic id modulo the bucket count), and every key of
/// bucket <c>b</c> starts with <c>{prefix}{b}</c> (prefix <c>laharsub:</c> by default, so
/// <c>laharsub:{3}topics</c>): the braces are a Redis Cluster hash tag, so a bucket's keys share one hash
/// slot, and every script, which touches the keys of one bucket only, runs on one shard. Per bucket:
/// <c>topics</c> (sorted set of topic ids), <c>retained</c> (bytes counted against the bucket's share of
/// MaxRetainedBytes), <c>expiry</c> (sorted set: topic id by when its oldest message expires), <c>used</c>
/// (sorted set: topic id by when it was last published to or read, kept only with TopicIdleTimeToLive),
/// <c>keyspace</c> (a random mark that vanishes with the other keys, see <see cref="MarkKeyspace"/>),
/// <c>era</c> (hash: the replication id of the primary that wrote the bucket's history, and a generation,
/// see <c>era_gen</c>), <c>t:{id}</c> (hash: epoch, created, last, bytes, body; <c>state</c> on a state topic),
/// <c>t:{id}:m</c> (list of messages, oldest first) and, on a state topic, <c>t:{id}:s</c> (its document: compact
/// JSON at version <c>last</c>, which the scripts keep as an opaque string, since Lua's cjson would turn <c>{}</c>
/// into <c>[]</c> and round large numbers; its length counts in <c>bytes</c> and <c>retained</c>, and no trim
/// touches it); changes are announced on the bucket's shard channel <c>changes</c> (SPUBLISH).
/// Presence adds <c>presence</c>/<c>presenceOf</c> to the hash and three keys per bucket (<see cref="RedisPresenceScripts"/>).
/// Topic ids come from one counter, <c>{prefix}{0}topic-ids</c>, so they grow in creation order. Every
/// script declares the keys it touches in KEYS. A key prefix that holds a hash tag itself puts every
/// bucket in one slot.
/// A message is stored as 16 digits of Unix milliseconds, a newline, the content type, a newline and the
/// body bytes. When the publish was traced, the content type is followed by a record separator (byte 0x1E,
/// which a content type cannot hold) and the publish's W3C <c>traceparent</c> (55 bytes, e.g.
/// <c>00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01</c>), on the same line, so that the
/// scripts' byte counts (the entry's length counts against MaxRetainedBytes, the part after the second
/// newline is the body) and entries stored without one read as before.
/// </remarks>
internal static class RedisScripts
{
    /// <summary>Functions every script shares: the clock, the trimming of expired messages, and the era of a bucket's history.</summary>
    internal const string Common = """
        local function now_ms()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        end

        -- The epoch clients see: the topic's own, or, once the bucket's history may have been lost in a
        -- failover (generation above 0), one derived from it and the generation, so that every cursor of
        -- the old history is told (epochChanged) rather than read against ids that may be reused.
        local function era_epoch(epoch, gen)
          if not gen or gen == '0' then return epoch end
          return string.sub(redis.sha1hex(epoch .. ':' .. gen), 1, 16)
        end

        -- The bucket's generation, raised when the primary that runs this script is not the one that
        -- wrote the bucket's history (its replication id differs): a replica promoted by a failover, or a
        -- restart, either of which may have lost the last writes. Every script that assigns an id calls it
        -- first, so no id is reused under the epoch of the history it replaces.
        local function era_gen(era)
          local id = string.match(redis.call('INFO', 'replication'), 'master_replid:(%w+)')
          local e = redis.call('HMGET', era, 'replid', 'gen')
          if e[1] ~= id then
            redis.call('HSET', era, 'replid', id)
            if e[1] then return tostring(redis.call('HINCRBY', era, 'gen', 1)) end
          end
          return e[2] or '0'
        end

        -- Drops a topic's messages published at or before `threshold`, keeps the byte counts and the
        -- expiry index right, and returns the number of messages left.
        local function trim(id, meta, msgs, retained, expiry, threshold, ttl)
          local freed_cost, freed_body = 0, 0
          local head = redis.call('LINDEX', msgs, 0)
          while head and tonumber(string.sub(head, 1, 16)) <= threshold do
            redis.call('LPOP', msgs)
            local nl = string.find(head, '\n', 18, true)
            freed_cost = freed_cost + #head
            freed_body = freed_body + (#head - nl)
            head = redis.call('LINDEX', msgs, 0)
          end
          if freed_cost > 0 then
            redis.call('HINCRBY', meta, 'bytes', -freed_cost)
            redis.call('HINCRBY', meta, 'body', -freed_body)
            redis.call('DECRBY', retained, freed_cost)
          end
          if head then
            redis.call('ZADD', expiry, tonumber(string.sub(head, 1, 16)) + ttl, id)
            return redis.call('LLEN', msgs)
          end
          redis.call('ZREM', expiry, id)
          return 0
        end

        -- Makes a new topic a state topic: the document {} at version 0, its bytes counted even on a full
        -- bucket (MaxTopics, not retention, bounds topics).
        local function start_state(meta, doc, retained)
          redis.call('HSET', meta, 'state', 1, 'bytes', 2)
          redis.call('SET', doc, '{}')
          redis.call('INCRBY', retained, 2)
        end

        -- Appends a stored entry under the topic's next id, drops the oldest beyond max_msgs, keeps the byte
        -- counts and the expiry and use indexes right, and returns the id.
        local function append(id, meta, msgs, retained, expiry, used, entry, body_len, max_msgs, ttl, track, now)
          local mid = redis.call('HINCRBY', meta, 'last', 1)
          local count = redis.call('RPUSH', msgs, entry)
          if track == '1' then redis.call('ZADD', used, now, id) end
          redis.call('HINCRBY', meta, 'bytes', #entry)
          redis.call('HINCRBY', meta, 'body', body_len)
          redis.call('INCRBY', retained, #entry)
          if count > max_msgs then
            local oldest = redis.call('LPOP', msgs)
            local nl = string.find(oldest, '\n', 18, true)
            redis.call('HINCRBY', meta, 'bytes', -#oldest)
            redis.call('HINCRBY', meta, 'body', -(#oldest - nl))
            redis.call('DECRBY', retained, #oldest)
          end
          local head = redis.call('LINDEX', msgs, 0)
          redis.call('ZADD', expiry, tonumber(string.sub(head, 1, 16)) + ttl, id)
          return mid
        end

        """;

    /// <summary>
    /// KEYS: topics, used, era, meta (of the new topic), retained, document (of the new topic). ARGV: max topics of the
    /// bucket, epoch, track use (1/0), label ('' for none), topic id, state (1/0). Returns {id, createdMs, epoch}, nil when
    /// the bucket is full, or {-1} when the id is taken (the id counter lost increments in a failover: the caller takes the next).
    /// </summary>
    public const string CreateTopic = Common + """
        if redis.call('EXISTS', KEYS[4]) == 1 then return {-1} end
        if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return nil end
        local gen = era_gen(KEYS[3])
        local id = ARGV[5]
        local created = now_ms()
        redis.call('HSET', KEYS[4], 'epoch', ARGV[2], 'created', created, 'last', 0, 'bytes', 0, 'body', 0)
        if ARGV[4] ~= '' then redis.call('HSET', KEYS[4], 'label', ARGV[4]) end
        if ARGV[6] == '1' then start_state(KEYS[4], KEYS[6], KEYS[5]) end
        redis.call('ZADD', KEYS[1], id, id)
        if ARGV[3] == '1' then redis.call('ZADD', KEYS[2], created, id) end
        return {tonumber(id), created, era_epoch(ARGV[2], gen)}
        """;

    /// <summary>
    /// KEYS: meta, msgs, retained, expiry, used, era, document. ARGV: if-epoch ('' for any), content type, body, max messages
    /// per topic, max retained bytes of the bucket, ttl ms, topic id, shard channel, track use (1/0), traceparent ('' for none),
    /// presence event (1: the server's event to a companion topic, 0: a client's publish, which a companion refuses),
    /// merge patch (1 when the content type is one, else 0).
    /// Returns {id, epoch} when published, {0} when the topic does not exist, {-1, epoch} on another epoch,
    /// {-2, ms until room} when full, {-4} when a client publishes to a presence companion topic; on a state topic,
    /// storing nothing, {-5} for a body that is not a merge patch and {-6, 'epoch:version', document} for one, which
    /// the caller applies to the document and commits with <see cref="PublishMany"/>.
    /// </summary>
    public const string Publish = Common + """
        local stored = redis.call('HMGET', KEYS[1], 'epoch', 'presenceOf', 'state', 'last')
        if not stored[1] then return {0} end
        local epoch = era_epoch(stored[1], era_gen(KEYS[6]))
        if ARGV[1] ~= '' and ARGV[1] ~= epoch then return {-1, epoch} end
        if stored[2] and ARGV[11] ~= '1' then return {-4} end
        if stored[3] then
          if ARGV[12] ~= '1' then return {-5} end
          return {-6, epoch .. ':' .. stored[4], redis.call('GET', KEYS[7])}
        end
        local now = now_ms()
        local ttl = tonumber(ARGV[6])
        trim(ARGV[7], KEYS[1], KEYS[2], KEYS[3], KEYS[4], now - ttl, ttl)
        local ctype = ARGV[2]
        if ARGV[10] ~= '' then ctype = ctype .. '\30' .. ARGV[10] end
        local entry = string.format('%016d', now) .. '\n' .. ctype .. '\n' .. ARGV[3]
        local retained = tonumber(redis.call('GET', KEYS[3]) or '0')
        if retained + #entry > tonumber(ARGV[5]) then
          local oldest = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
          local wait = ttl
          if oldest[2] then wait = tonumber(oldest[2]) - now end
          return {-2, wait}
        end
        local id = append(ARGV[7], KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], entry, #ARGV[3], tonumber(ARGV[4]), ttl, ARGV[9], now)
        redis.call('SPUBLISH', ARGV[8], ARGV[7])
        return {id, epoch}
        """;

    /// <summary>
    /// One message to several topics of one bucket, all or none, with its idempotency key if any; also the commit of
    /// every write to a state topic. KEYS: retained, expiry, used, idempotency key, era, then meta, msgs and document
    /// of each topic. ARGV: content type, body, max messages per topic, max retained bytes of the bucket, ttl ms, shard
    /// channel, track use (1/0), fingerprint ('' without a key), key lifetime ms, write ('m' a message that is no merge
    /// patch, 'p' a merge patch, 'r' a replacement of a state topic's document), traceparent ('' for none), the content
    /// type a state topic stores it under, then for each topic its id, if-epoch ('' for any), if-version ('' for any),
    /// the 'epoch:version' of the document the caller applied the write to ('' for none) and the new document it made
    /// ('' on a topic without state).
    /// Returns {1, id, epoch, ...} when published, {2, 'id epoch ...'} replaying the key's answer, {-11} when
    /// the key came with another fingerprint, {-3, status, epoch, last id, ...} when topics refuse (status 0 missing,
    /// -1 another epoch, -4 a presence companion topic, -5 a state topic given no merge patch, -7 a replacement of a topic
    /// without state, -6 another version than if-version, 1 would take it), {-2, ms until room} when full, and
    /// {-12, 'epoch:version', document, ...} (two empty strings for a topic without state), storing nothing, when a
    /// patch was not applied to the current document of every state topic: the caller applies it to these and calls
    /// again. The documents are opaque strings here: only .NET parses them. The key holds the fingerprint, a line feed
    /// and the answer, and expires by itself.
    /// </summary>
    public const string PublishMany = Common + """
        local fingerprint = ARGV[8]
        if fingerprint ~= '' then
          local recorded = redis.call('GET', KEYS[4])
          if recorded then
            local nl = string.find(recorded, '\n', 1, true)
            if string.sub(recorded, 1, nl - 1) ~= fingerprint then return {-11} end
            return {2, string.sub(recorded, nl + 1)}
          end
        end
        local gen = era_gen(KEYS[5])
        local n = (#KEYS - 5) / 3
        local write = ARGV[10]
        local epochs, lasts, states, statuses, refused = {}, {}, {}, {}, false
        for i = 1, n do
          local a = 7 + 5 * i
          local stored = redis.call('HMGET', KEYS[3 + 3 * i], 'epoch', 'presenceOf', 'state', 'last')
          local epoch = stored[1]
          local wanted = ARGV[a + 2]
          local version = ARGV[a + 3]
          local status = 1
          if epoch then epoch = era_epoch(epoch, gen) end
          if not epoch then
            status, epoch = 0, ''
          elseif not stored[3] and write == 'r' then
            status = -7
          elseif wanted ~= '' and wanted ~= epoch then
            status = -1
          elseif stored[2] then
            status = -4
          elseif stored[3] and write == 'm' then
            status = -5
          elseif version ~= '' and version ~= stored[4] then
            status = -6
          end
          statuses[i], epochs[i], lasts[i], states[i] = status, epoch, stored[4] or '0', stored[3] and true or false
          if status ~= 1 then refused = true end
        end
        if refused then
          local result = {-3}
          for i = 1, n do
            result[#result + 1] = statuses[i]
            result[#result + 1] = epochs[i]
            result[#result + 1] = tonumber(lasts[i])
          end
          return result
        end
        -- A patch's new document depends on the one it was applied to: the version check of a compare-and-set
        -- commit, with the epoch, so that a document of a history lost in a failover is never taken for the current one.
        if write == 'p' then
          local stale = false
          for i = 1, n do
            if states[i] and ARGV[11 + 5 * i] ~= epochs[i] .. ':' .. lasts[i] then stale = true end
          end
          if stale then
            local result = {-12}
            for i = 1, n do
              if states[i] then
                result[#result + 1] = epochs[i] .. ':' .. lasts[i]
                result[#result + 1] = redis.call('GET', KEYS[5 + 3 * i])
              else
                result[#result + 1] = ''
                result[#result + 1] = ''
              end
            end
            return result
          end
        end
        local now = now_ms()
        local ttl = tonumber(ARGV[5])
        for i = 1, n do
          trim(ARGV[8 + 5 * i], KEYS[3 + 3 * i], KEYS[4 + 3 * i], KEYS[1], KEYS[2], now - ttl, ttl)
        end
        local ctype, state_ctype = ARGV[1], ARGV[12]
        if ARGV[11] ~= '' then
          ctype = ctype .. '\30' .. ARGV[11]
          state_ctype = state_ctype .. '\30' .. ARGV[11]
        end
        local stamp = string.format('%016d', now) .. '\n'
        local entry = stamp .. ctype .. '\n' .. ARGV[2]
        local state_entry = stamp .. state_ctype .. '\n' .. ARGV[2]
        local needed, growth = 0, {}
        for i = 1, n do
          if states[i] then
            growth[i] = #ARGV[12 + 5 * i] - redis.call('STRLEN', KEYS[5 + 3 * i])
            needed = needed + #state_entry + growth[i]
          else
            needed = needed + #entry
          end
        end
        local retained = tonumber(redis.call('GET', KEYS[1]) or '0')
        if retained + needed > tonumber(ARGV[4]) then
          local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
          local wait = ttl
          if oldest[2] then wait = tonumber(oldest[2]) - now end
          return {-2, wait}
        end
        local result, answer = {1}, {}
        local max_msgs = tonumber(ARGV[3])
        for i = 1, n do
          local id = ARGV[8 + 5 * i]
          local meta = KEYS[3 + 3 * i]
          local stored_entry = entry
          if states[i] then
            stored_entry = state_entry
            redis.call('SET', KEYS[5 + 3 * i], ARGV[12 + 5 * i])
            redis.call('HINCRBY', meta, 'bytes', growth[i])
            redis.call('INCRBY', KEYS[1], growth[i])
          end
          local mid = append(id, meta, KEYS[4 + 3 * i], KEYS[1], KEYS[2], KEYS[3], stored_entry, #ARGV[2], max_msgs, ttl, ARGV[7], now)
          result[#result + 1] = mid
          result[#result + 1] = epochs[i]
          answer[#answer + 1] = mid .. ' ' .. epochs[i]
        end
        if fingerprint ~= '' then
          redis.call('SET', KEYS[4], fingerprint .. '\n' .. table.concat(answer, ' '), 'PX', ARGV[9])
        end
        for i = 1, n do
          redis.call('SPUBLISH', ARGV[6], ARGV[8 + 5 * i])
        end
        return result
        """;

    /// <summary>
    /// KEYS: meta, msgs, retained, expiry, used, era, document. ARGV: from, max messages, max bytes, ttl ms, topic id, track use (1/0),
    /// with document (1/0). Returns nil when the topic does not exist, else {epoch, last, first, state (1/0), document, message...}:
    /// with document on a state topic, its document at version last and no message; else '' and the messages.
    /// </summary>
    public const string Read = Common + """
        local meta = redis.call('HMGET', KEYS[1], 'epoch', 'last', 'state')
        if not meta[1] then return nil end
        local ttl = tonumber(ARGV[4])
        local now = now_ms()
        if ARGV[6] == '1' then redis.call('ZADD', KEYS[5], now, ARGV[5]) end
        local len = trim(ARGV[5], KEYS[1], KEYS[2], KEYS[3], KEYS[4], now - ttl, ttl)
        local last = tonumber(meta[2])
        local first = last - len + 1
        local result = {era_epoch(meta[1], redis.call('HGET', KEYS[6], 'gen')), last, first, meta[3] and 1 or 0, ''}
        if meta[3] and ARGV[7] == '1' then
          result[5] = redis.call('GET', KEYS[7])
          return result
        end
        local max = tonumber(ARGV[2])
        local from = math.max(tonumber(ARGV[1]), first)
        if max > 0 and from <= last then
          local max_bytes = tonumber(ARGV[3])
          local start = from - first
          local entries = redis.call('LRANGE', KEYS[2], start, start + max - 1)
          local bytes = 0
          for _, entry in ipairs(entries) do
            result[#result + 1] = entry
            bytes = bytes + #entry - string.find(entry, '\n', 18, true)
            if bytes >= max_bytes then break end
          end
        end
        return result
        """;

    /// <summary>
    /// KEYS: meta, msgs, retained, expiry, (used: not touched, a look is not a use), era. ARGV: ttl ms, topic id.
    /// Returns nil when the topic does not exist, else {epoch, created, last, retained messages, body bytes, label ('' for none),
    /// companion topic id (0 for none), id of the topic a companion belongs to (0 for none), state (1/0)}.
    /// Also what the sweep runs to trim a topic whose oldest message expired.
    /// </summary>
    public const string Info = Common + """
        local meta = redis.call('HMGET', KEYS[1], 'epoch', 'created', 'last', 'label', 'presence', 'presenceOf', 'state')
        if not meta[1] then return nil end
        local ttl = tonumber(ARGV[1])
        local len = trim(ARGV[2], KEYS[1], KEYS[2], KEYS[3], KEYS[4], now_ms() - ttl, ttl)
        return {era_epoch(meta[1], redis.call('HGET', KEYS[6], 'gen')), tonumber(meta[2]), tonumber(meta[3]), len,
          tonumber(redis.call('HGET', KEYS[1], 'body')), meta[4] or '', tonumber(meta[5] or '0'), tonumber(meta[6] or '0'),
          meta[7] and 1 or 0}
        """;

    /// <summary>KEYS: topics (of one bucket). ARGV: after id, limit. Returns the ids of up to limit topics of the bucket after the given id.</summary>
    public const string ListIds = """
        return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'LIMIT', 0, tonumber(ARGV[2]))
        """;

    /// <summary>
    /// KEYS: topics, meta, msgs, retained, expiry, used, then the companion topic's meta and msgs, the bucket's
    /// presence members, expiry and data (<see cref="RedisPresenceScripts"/>), and the topic's document. ARGV: topic id, shard channel, idle ms
    /// (0: delete in any case; else only if the topic is still unused that long, for the idle sweep), the id the
    /// topic's companion would have (id + Buckets). Removes the topic, its messages, its document and their bytes, and announces
    /// it; a topic with presence takes its companion and its members along, without events, and the idle sweep
    /// never deletes a companion on its own (its subscribers' use does not show on its topic).
    /// Returns 1 when deleted, 0 when there was no such topic (or it was used meanwhile).
    /// </summary>
    public const string Delete = Common + """
        local function drop(id, meta, msgs, doc)
          if redis.call('ZREM', KEYS[1], id) == 0 then return 0 end
          local bytes = tonumber(redis.call('HGET', meta, 'bytes') or '0')
          redis.call('DEL', meta, msgs)
          if doc then redis.call('DEL', doc) end
          redis.call('DECRBY', KEYS[4], bytes)
          redis.call('ZREM', KEYS[5], id)
          redis.call('ZREM', KEYS[6], id)
          redis.call('SPUBLISH', ARGV[2], id)
          return 1
        end
        local idle = tonumber(ARGV[3])
        local presence = redis.call('HMGET', KEYS[2], 'presence', 'presenceOf')
        if idle > 0 then
          if presence[2] then
            redis.call('ZREM', KEYS[6], ARGV[1])
            return 0
          end
          local used = redis.call('ZSCORE', KEYS[6], ARGV[1])
          if not used or tonumber(used) > now_ms() - idle then return 0 end
        end
        if presence[1] and presence[1] ~= ARGV[4] then
          return redis.error_reply('topic ' .. ARGV[1] .. ' has companion ' .. presence[1] .. ', not ' .. ARGV[4] .. ': was Laharsub:Redis:Buckets changed?')
        end
        if drop(ARGV[1], KEYS[2], KEYS[3], KEYS[12]) == 0 then return 0 end
        if presence[1] then
          drop(ARGV[4], KEYS[7], KEYS[8])
          local prefix = ARGV[1] .. ':'
          local fields = redis.call('ZRANGEBYLEX', KEYS[9], '[' .. prefix, '(' .. ARGV[1] .. ';')
          -- In slices: unpack has a limit on how many values it spreads.
          for i = 1, #fields, 1000 do
            local slice = {unpack(fields, i, math.min(i + 999, #fields))}
            redis.call('ZREM', KEYS[9], unpack(slice))
            redis.call('ZREM', KEYS[10], unpack(slice))
            redis.call('HDEL', KEYS[11], unpack(slice))
          end
        end
        return 1
        """;

    /// <summary>
    /// KEYS: keyspace. ARGV: a new random mark. Sets the mark unless the key holds one; returns the mark it
    /// holds and 1 when this call had to set it (the keys were never there, or Redis lost them), else 0.
    /// </summary>
    public const string MarkKeyspace = """
        local created = redis.call('SET', KEYS[1], ARGV[1], 'NX')
        return { redis.call('GET', KEYS[1]), created and 1 or 0 }
        """;

    /// <summary>
    /// KEYS: expiry, used (of one bucket). ARGV: batch size, idle ms (0: keep idle topics). Returns {ids whose
    /// oldest message expired, ids unused for idle ms}, each at most a batch: the sweep then trims (<see cref="Info"/>)
    /// or deletes (<see cref="Delete"/>, which checks again) each, with its keys declared.
    /// </summary>
    public const string Due = Common + """
        local now = now_ms()
        local batch = tonumber(ARGV[1])
        local idle = tonumber(ARGV[2])
        local unused = {}
        if idle > 0 then unused = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - idle, 'LIMIT', 0, batch) end
        return {redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, batch), unused}
        """;
}
