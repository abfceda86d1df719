using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Security.Cryptography;
using System.Text;
using Laharsub.Server.Storage;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using StackExchange.Redis;

namespace Laharsub.Server.Redis;

/// <summary>
/// Keeps topics and messages in Redis, so that any number of stateless Laharsub instances serve the
/// same topics. Ids are assigned and messages appended by Lua scripts (<see cref="RedisScripts"/>),
/// atomically, each in one bucket's hash slot, so that they run on one Redis, under Sentinel, or on a
/// Redis Cluster; a publish or delete is announced on its bucket's shard channel (SPUBLISH), to which each
/// instance holds one subscription per bucket that wakes its own waiting polls through <see cref="ITopicSignals"/>.
/// </summary>
/// <remarks>
/// One multiplexer per process, as StackExchange.Redis intends (its own, or the application's through
/// <see cref="LaharsubRedisOptions.ConnectionMultiplexerFactory"/>): concurrent commands are pipelined on
/// it, and the reads of a multi-topic poll are sent together, not one round trip after another. It is
/// made in the background once the store exists, never in the constructor's time, so that start-up never
/// waits for Redis (aspnetcore's RedisOutputCacheStore connects at its first use for the same reason); the
/// first commands wait for that connection. While Redis cannot be reached, commands fail at once (no
/// backlog) and the server answers 503; the multiplexer reconnects by itself, and every waiting poll then
/// reads again, in case it missed a change meanwhile.
/// </remarks>
internal sealed partial class RedisStore : ILaharsubStore, IPresenceStore, IAsyncDisposable, IDisposable
{
    private const int CachedBodyLimit = 4096;
    private const int SweepBatch = 500;

    /// <summary>Separates a stored message's content type from the publish's traceparent (RedisScripts' remarks).</summary>
    private const byte TraceParentSeparator = 0x1E;

    /// <summary>Lua numbers are doubles: larger integers lose their exactness.</summary>
    private const long MaxExactLuaInteger = (1L << 53) - 1;

    /// <summary>
    /// How many times a patch is applied to a document that another write changed meanwhile before the write gives up:
    /// each further attempt means another write to one of its topics committed in one round trip, so only a topic
    /// that many writers patch at once gets near it.
    /// </summary>
    private const int StateWriteAttempts = 64;

    private readonly LaharsubStoreOptions _options;
    private readonly LaharsubRedisOptions _redisOptions;
    private readonly ITopicSignals _signals;
    private readonly ILogger<RedisStore> _logger;
    private readonly SemaphoreSlim _connecting = new(1, 1);
    private IConnectionMultiplexer? _connection;
    private bool _ownsConnection;
    private readonly Bucket[] _buckets;
    private readonly RedisKey _topicIdsKey;
    private readonly int _maxTopicsPerBucket;
    private readonly long _maxRetainedBytesPerBucket;
    private readonly Message?[] _cache;
    private readonly RetentionBudget _cacheBudget;
    private readonly ITimer _sweepTimer;
    private readonly CancellationTokenSource _stopping = new();
    private Task _subscription = Task.CompletedTask;
    private int _sweeping;
    private int _clusterChecked;

    /// <summary>What the warning about one bucket on a cluster advises: several buckets per shard for 3 to 5 shards (<see cref="LaharsubRedisOptions.Buckets"/>).</summary>
    internal const int RecommendedClusterBuckets = 16;
    private readonly string?[] _keyspaceMarks;

    /// <summary>Prepares the store and starts connecting to Redis without waiting for it (a server may start before its Redis).</summary>
    public RedisStore(IOptions<LaharsubStoreOptions> options, IOptions<LaharsubRedisOptions> redisOptions, ITopicSignals signals,
        TimeProvider timeProvider, ILogger<RedisStore> logger)
    {
        _options = options.Value;
        _redisOptions = redisOptions.Value;
        _signals = signals;
        _logger = logger;
        _buckets = new Bucket[_redisOptions.Buckets];
        for (var b = 0; b < _buckets.Length; b++)
        {
            _buckets[b] = new Bucket(_redisOptions.KeyPrefix + "{" + b.ToString(CultureInfo.InvariantCulture) + "}");
        }
        _keyspaceMarks = new string?[_buckets.Length];
        _topicIdsKey = _buckets[0].Tag + "topic-ids";
        // Each bucket enforces its share (RedisScripts' remarks): exact with one bucket.
        _maxTopicsPerBucket = (int)Math.Min(int.MaxValue, ((long)_options.MaxTopics + _buckets.Length - 1) / _buckets.Length);
        _maxRetainedBytesPerBucket = _options.MaxRetainedBytes / _buckets.Length + (_options.MaxRetainedBytes % _buckets.Length == 0 ? 0 : 1);
        _cache = new Message?[_redisOptions.LocalCacheSize];
        _cacheBudget = new RetentionBudget(_redisOptions.LocalCacheBytes);

        _ = Task.Run(ConnectInBackgroundAsync);
        _sweepTimer = timeProvider.CreateTimer(static state => _ = ((RedisStore)state!).SweepAsync(), this,
            _options.RetentionSweepInterval, _options.RetentionSweepInterval);
    }

    /// <summary>The connection: the one under way or made, or, when making it failed, a new attempt.</summary>
    private ValueTask<IConnectionMultiplexer> ConnectionAsync() =>
        Volatile.Read(ref _connection) is { } connection ? new(connection) : new(ConnectAsync());

    private async Task<IConnectionMultiplexer> ConnectAsync()
    {
        await _connecting.WaitAsync(_stopping.Token).ConfigureAwait(false);
        try
        {
            if (_connection is { } made)
            {
                return made;
            }
            var factory = _redisOptions.ConnectionMultiplexerFactory;
            var connection = await Guard(factory is not null ? factory() : ConnectOwnAsync()).ConfigureAwait(false);
            _ownsConnection = factory is null;
            connection.ConnectionFailed += OnConnectionFailed;
            connection.ConnectionRestored += OnConnectionRestored;
            Volatile.Write(ref _connection, connection);
            if (_stopping.IsCancellationRequested)
            {
                // Disposed while connecting: this connection is not left behind.
                Detach()?.Dispose();
                throw new ObjectDisposedException(nameof(RedisStore));
            }
            WarnIfOneBucketOnACluster(connection);
            _subscription = SubscribeAsync(connection, _stopping.Token);
            return connection;
        }
        finally
        {
            _connecting.Release();
        }
    }

    /// <summary>Connects at start, so that a cluster's bucket warning comes then; a failure is left to the next command to retry.</summary>
    private async Task ConnectInBackgroundAsync()
    {
        try
        {
            await ConnectionAsync().ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            if (!_stopping.IsCancellationRequested)
            {
                Log.ConnectFailed(_logger, exception.Message);
            }
        }
    }

    private async Task<IConnectionMultiplexer> ConnectOwnAsync()
    {
        var configuration = ConfigurationOptions.Parse(_redisOptions.Configuration);
        // Come up even while Redis is down (the health check says so), and refuse requests at once
        // rather than queueing them for seconds: a 503 that says "Redis" beats a hung poll.
        configuration.AbortOnConnectFail = false;
        configuration.BacklogPolicy = BacklogPolicy.FailFast;
        configuration.ClientName ??= "laharsub";
        // Try again every second (the default backs off to much longer), so service resumes soon after Redis does.
        configuration.ReconnectRetryPolicy ??= new LinearRetry(1000);
        return await ConnectionMultiplexer.ConnectAsync(configuration).ConfigureAwait(false);
    }

    private void OnConnectionFailed(object? sender, ConnectionFailedEventArgs e) =>
        Log.ConnectionLost(_logger, e.EndPoint, e.FailureType, e.Exception?.Message ?? "");

    private void OnConnectionRestored(object? sender, ConnectionFailedEventArgs e)
    {
        Log.ConnectionRestored(_logger, e.EndPoint);
        if (sender is IConnectionMultiplexer connection)
        {
            WarnIfOneBucketOnACluster(connection);
        }
        // Changes announced while the subscription was down were lost: every waiting poll reads again.
        _signals.SignalAll();
    }

    /// <summary>
    /// A bucket's keys share one hash slot, so with one bucket a cluster's other shards hold nothing. Said
    /// once, as soon as the servers are known (at start, or when a Redis that was down is first reached).
    /// </summary>
    private void WarnIfOneBucketOnACluster(IConnectionMultiplexer connection)
    {
        if (_buckets.Length > 1 || Volatile.Read(ref _clusterChecked) != 0)
        {
            return;
        }
        var servers = connection.GetServers().Where(server => server.IsConnected).ToList();
        if (servers.Count == 0 || Interlocked.Exchange(ref _clusterChecked, 1) != 0)
        {
            return;
        }
        if (servers.Any(server => server.ServerType == ServerType.Cluster))
        {
            Log.OneBucketOnACluster(_logger, servers.Count(server => !server.IsReplica), RecommendedClusterBuckets);
        }
    }

    /// <inheritdoc/>
    public ValueTask<TopicInfo?> CreateTopicAsync(string? label = null, bool state = false, CancellationToken cancellationToken = default) =>
        CreateAsync(label, presence: false, state);

    /// <summary>
    /// Creates a topic, or a topic with presence and its companion (<see cref="RedisPresenceScripts"/>' remarks), in its
    /// bucket; with <paramref name="state"/>, the topic holds the document <c>{}</c> (RedisScripts' remarks).
    /// </summary>
    private async ValueTask<TopicInfo?> CreateAsync(string? label, bool presence, bool state)
    {
        var epoch = NewEpoch();
        var companionEpoch = presence ? NewEpoch() : "";
        var database = (await ConnectionAsync().ConfigureAwait(false)).GetDatabase();
        // One counter (a single INCR on one shard; RedisScripts' remarks), so ids grow in creation order; the
        // topic is then created in its bucket. A counter that went back in a failover hands out ids that
        // are taken: the script says so and the next id is tried.
        for (var attempt = 0; ; attempt++)
        {
            RedisResult result;
            long id;
            if (presence)
            {
                // Buckets + 1 ids: the first and the last are equal modulo Buckets, so both topics share a bucket.
                var last = await Guard(database.StringIncrementAsync(_topicIdsKey, _buckets.Length + 1)).ConfigureAwait(false);
                id = last - _buckets.Length;
                var bucket = BucketOf(id);
                result = await RunAsync(RedisPresenceScripts.CreateTopicWithPresence,
                    [bucket.Topics, bucket.Used, bucket.Era, MetaKey(id), MetaKey(last), bucket.Retained, DocumentKey(MetaKey(id))],
                    [_maxTopicsPerBucket, epoch, companionEpoch, TrackUse, label ?? "", id, last, state ? 1 : 0]).ConfigureAwait(false);
            }
            else
            {
                id = await Guard(database.StringIncrementAsync(_topicIdsKey)).ConfigureAwait(false);
                var bucket = BucketOf(id);
                result = await RunAsync(RedisScripts.CreateTopic, [bucket.Topics, bucket.Used, bucket.Era, MetaKey(id), bucket.Retained, DocumentKey(MetaKey(id))],
                    [_maxTopicsPerBucket, epoch, TrackUse, label ?? "", id, state ? 1 : 0]).ConfigureAwait(false);
            }
            if (result.IsNull)
            {
                return null;
            }
            var created = (RedisResult[])result!;
            if ((long)created[0] > 0)
            {
                return new TopicInfo(id, (string)created[2]!, DateTimeOffset.FromUnixTimeMilliseconds((long)created[1]), 0, 1, 0, 0, Label: label,
                    PresenceTopicId: presence ? CompanionOf(id) : null, State: state);
            }
            if (attempt == 1000)
            {
                throw new InvalidOperationException($"The topic id counter {_topicIdsKey} keeps handing out ids that are taken.");
            }
        }
    }

    private static string NewEpoch() => Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(8));

    /// <inheritdoc/>
    public async ValueTask<TopicInfo?> GetTopicAsync(long topicId, CancellationToken cancellationToken = default) =>
        ToTopicInfo(topicId, await RunAsync(RedisScripts.Info, TopicKeys(topicId), [TtlMilliseconds, topicId]).ConfigureAwait(false));

    /// <inheritdoc/>
    public async ValueTask<IReadOnlyList<TopicInfo>> ListTopicsAsync(long afterTopicId, int limit, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(afterTopicId);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        // Each bucket's next ids, merged: the page is the first `limit` of them.
        var pages = new Task<RedisResult>[_buckets.Length];
        for (var b = 0; b < _buckets.Length; b++)
        {
            pages[b] = RunAsync(RedisScripts.ListIds, [_buckets[b].Topics], [afterTopicId, limit]);
        }
        var merged = new List<long>();
        foreach (var bucketPage in pages)
        {
            foreach (var id in (RedisResult[])(await bucketPage.ConfigureAwait(false))!)
            {
                merged.Add((long)id);
            }
        }
        merged.Sort();
        var ids = merged.Take(limit).ToArray();
        // The infos of the page in one pipelined batch, not one round trip per topic.
        var database = (await ConnectionAsync().ConfigureAwait(false)).GetDatabase();
        var pending = new Task<RedisResult>[ids.Length];
        for (var i = 0; i < ids.Length; i++)
        {
            var id = ids[i];
            pending[i] = Guard(database.ScriptEvaluateAsync(RedisScripts.Info, TopicKeys(id), [TtlMilliseconds, id]));
        }
        var page = new List<TopicInfo>(ids.Length);
        for (var i = 0; i < ids.Length; i++)
        {
            if (ToTopicInfo(ids[i], await pending[i].ConfigureAwait(false)) is { } info)
            {
                page.Add(info);
            }
        }
        return page;
    }

    /// <inheritdoc/>
    public async ValueTask<bool> DeleteTopicAsync(long topicId, CancellationToken cancellationToken = default)
    {
        var result = await RunAsync(RedisScripts.Delete, DeleteKeys(topicId), [topicId, BucketOf(topicId).ChangesName, 0, CompanionOf(topicId)]).ConfigureAwait(false);
        return (long)result == 1;
    }

    /// <inheritdoc/>
    public ValueTask<PublishResult> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, string? ifEpoch = null,
        CancellationToken cancellationToken = default) =>
        PublishAsync(topicId, body, contentType, ifEpoch, presenceEvent: false);

    /// <summary>A client's publish, or with <paramref name="presenceEvent"/> the server's event to a companion topic, which refuses a client's.</summary>
    private async ValueTask<PublishResult> PublishAsync(long topicId, ReadOnlyMemory<byte> body, string contentType, string? ifEpoch, bool presenceEvent)
    {
        ArgumentNullException.ThrowIfNull(contentType);
        if (body.Length == 0 || body.Length > _options.MaxMessageBytes)
        {
            return new PublishResult(PublishStatus.InvalidSize);
        }
        // Also what keeps a stored entry readable: its content type ends at the first line feed.
        if (!Message.IsValidContentType(contentType))
        {
            return new PublishResult(PublishStatus.InvalidContentType);
        }
        var patch = MergePatch.IsMergePatch(contentType);
        RedisResult result;
        try
        {
            result = await RunAsync(RedisScripts.Publish, TopicKeys(topicId),
                [ifEpoch ?? "", contentType, body, _options.MaxMessagesPerTopic, _maxRetainedBytesPerBucket, TtlMilliseconds, topicId, BucketOf(topicId).ChangesName,
                    // An event is no use of the companion: it goes with its topic only (RedisScripts.Delete).
                    presenceEvent ? 0 : TrackUse, TraceParent(Message.PublisherTraceContext), presenceEvent ? 1 : 0, patch ? 1 : 0])
                .ConfigureAwait(false);
        }
        catch (RedisServerException exception) when (exception.Message.StartsWith("OOM", StringComparison.Ordinal))
        {
            // Redis's own maxmemory (with noeviction) is the hard bound: full, refused, nothing dropped.
            Log.RedisFull(_logger, exception.Message);
            return new PublishResult(PublishStatus.StorageFull, RetryAfter: _options.MessageTimeToLive);
        }
        var answer = (RedisResult[])result!;
        if ((long)answer[0] > 0)
        {
            await ConfirmReplicatedAsync(MetaKey(topicId)).ConfigureAwait(false);
        }
        return (long)answer[0] switch
        {
            0 => new PublishResult(PublishStatus.TopicNotFound),
            -1 => new PublishResult(PublishStatus.EpochMismatch, Epoch: (string)answer[1]!),
            -2 => new PublishResult(PublishStatus.StorageFull, RetryAfter: TimeSpan.FromMilliseconds(Math.Max(1000, (long)answer[1]))),
            -4 => new PublishResult(PublishStatus.PresenceTopic),
            -5 => new PublishResult(PublishStatus.NotAPatch),
            // A state topic: the script sent its document, to apply the patch to and commit.
            -6 => SingleResult(await CommitAsync(new[] { new PublishTarget(topicId, ifEpoch) }, body, contentType, WriteKind.Patch, null, answer[1..])
                .ConfigureAwait(false)),
            var id => new PublishResult(PublishStatus.Published, id, (string)answer[1]!),
        };
    }

    /// <inheritdoc/>
    public async ValueTask<MultiPublishResult> PublishManyAsync(ReadOnlyMemory<PublishTarget> targets, ReadOnlyMemory<byte> body, string contentType,
        IdempotencyKey? idempotencyKey = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(contentType);
        PublishTarget.ThrowIfInvalid(targets.Span, _options.MaxTopicsPerPublish);
        if (body.Length == 0 || body.Length > _options.MaxMessageBytes)
        {
            return new MultiPublishResult(PublishStatus.InvalidSize, []);
        }
        if (!Message.IsValidContentType(contentType))
        {
            return new MultiPublishResult(PublishStatus.InvalidContentType, []);
        }
        return await CommitAsync(targets, body, contentType, MergePatch.IsMergePatch(contentType) ? WriteKind.Patch : WriteKind.Message, idempotencyKey, null)
            .ConfigureAwait(false);
    }

    /// <summary>
    /// Publishes to <paramref name="targets"/> (of one bucket) with <see cref="RedisScripts.PublishMany"/>, all or none, applying
    /// a patch to each state topic's document: with <paramref name="documents"/> (a script's 'epoch:version' and document per
    /// target) at once, else once the script has sent them; again when another write changed one meanwhile.
    /// </summary>
    private async ValueTask<MultiPublishResult> CommitAsync(ReadOnlyMemory<PublishTarget> targets, ReadOnlyMemory<byte> body, string contentType,
        WriteKind write, IdempotencyKey? idempotencyKey, RedisResult[]? documents)
    {
        var count = targets.Length;
        // One script, so all or none: the topics must share a bucket (always so with one bucket).
        var bucket = BucketOf(targets.Span[0].TopicId);
        for (var i = 1; i < count; i++)
        {
            if (BucketOf(targets.Span[i].TopicId) != bucket)
            {
                return new MultiPublishResult(PublishStatus.TopicsNotTogether, []);
            }
        }
        var keys = new RedisKey[5 + 3 * count];
        keys[0] = bucket.Retained;
        keys[1] = bucket.Expiry;
        keys[2] = bucket.Used;
        // Without a key the script reads none; the slot still names a key of this store, as Redis asks of KEYS.
        keys[3] = bucket.Tag + "idem:" + (idempotencyKey?.Key ?? "");
        keys[4] = bucket.Era;
        var values = new RedisValue[12 + 5 * count];
        values[0] = contentType;
        values[1] = body;
        values[2] = _options.MaxMessagesPerTopic;
        values[3] = _maxRetainedBytesPerBucket;
        values[4] = TtlMilliseconds;
        values[5] = bucket.ChangesName;
        values[6] = TrackUse;
        values[7] = idempotencyKey?.Fingerprint ?? "";
        values[8] = (long)_options.IdempotencyKeyLifetime.TotalMilliseconds;
        values[9] = write switch { WriteKind.Patch => "p", WriteKind.Replace => "r", _ => "m" };
        values[10] = TraceParent(Message.PublisherTraceContext);
        values[11] = write == WriteKind.Replace ? MergePatch.DocumentMediaType : MergePatch.MediaType;
        for (var i = 0; i < count; i++)
        {
            var target = targets.Span[i];
            var meta = MetaKey(target.TopicId);
            keys[5 + 3 * i] = meta;
            keys[6 + 3 * i] = MessagesKey(meta);
            keys[7 + 3 * i] = DocumentKey(meta);
            values[12 + 5 * i] = target.TopicId;
            values[13 + 5 * i] = target.IfEpoch ?? "";
            values[14 + 5 * i] = target.IfVersion is { } version ? version.ToString(CultureInfo.InvariantCulture) : "";
            values[15 + 5 * i] = "";
            // A replacement does not depend on the document it replaces: it is the new document as it stands.
            values[16 + 5 * i] = write == WriteKind.Replace ? body : "";
        }
        for (var attempt = 1; ; attempt++)
        {
            if (documents is not null)
            {
                for (var i = 0; i < count; i++)
                {
                    var stamp = (string?)documents[2 * i];
                    if (string.IsNullOrEmpty(stamp))
                    {
                        continue;
                    }
                    var status = MergePatch.TryApply(((byte[])documents[2 * i + 1]!).AsSpan(), body.Span, _options.MaxStateBytes, out var document);
                    if (status != PublishStatus.Published)
                    {
                        var topics = new PublishResult[count];
                        Array.Fill(topics, new PublishResult(PublishStatus.NotAttempted));
                        topics[i] = new PublishResult(status);
                        return new MultiPublishResult(status, topics);
                    }
                    values[15 + 5 * i] = stamp;
                    values[16 + 5 * i] = document;
                }
            }
            RedisResult result;
            try
            {
                result = await RunAsync(RedisScripts.PublishMany, keys, values).ConfigureAwait(false);
            }
            catch (RedisServerException exception) when (exception.Message.StartsWith("OOM", StringComparison.Ordinal))
            {
                Log.RedisFull(_logger, exception.Message);
                return new MultiPublishResult(PublishStatus.StorageFull, [], RetryAfter: _options.MessageTimeToLive);
            }
            var answer = (RedisResult[])result!;
            if ((long)answer[0] != -12)
            {
                return await ToMultiPublishResultAsync(answer, count, keys[5]).ConfigureAwait(false);
            }
            if (attempt == StateWriteAttempts)
            {
                throw new LaharsubStoreUnavailableException("Redis",
                    $"The document of topic {targets.Span[0].TopicId}{(count > 1 ? " or another of the publish" : "")} changed {attempt} times while this write was applied to it: too many writers patch it at once. Nothing was stored; retry.")
                { RetryAfter = _redisOptions.RetryAfter };
            }
            Log.StateWriteConflict(_logger, targets.Span[0].TopicId, attempt);
            documents = answer[1..];
        }
    }

    /// <summary>What <see cref="RedisScripts.PublishMany"/> answered, but for a conflict, as the store's result.</summary>
    private async ValueTask<MultiPublishResult> ToMultiPublishResultAsync(RedisResult[] answer, int count, RedisKey firstMeta)
    {
        var topics = new PublishResult[count];
        switch ((long)answer[0])
        {
            case 1:
                await ConfirmReplicatedAsync(firstMeta).ConfigureAwait(false);
                for (var i = 0; i < count; i++)
                {
                    topics[i] = new PublishResult(PublishStatus.Published, (long)answer[1 + 2 * i], (string)answer[2 + 2 * i]!);
                }
                return new MultiPublishResult(PublishStatus.Published, topics);
            case 2:
                var recorded = ((string)answer[1]!).Split(' ');
                for (var i = 0; i < count; i++)
                {
                    topics[i] = new PublishResult(PublishStatus.Published, long.Parse(recorded[2 * i], CultureInfo.InvariantCulture), recorded[2 * i + 1]);
                }
                return new MultiPublishResult(PublishStatus.Published, topics, Replayed: true);
            case -11:
                return new MultiPublishResult(PublishStatus.IdempotencyKeyMismatch, []);
            case -2:
                return new MultiPublishResult(PublishStatus.StorageFull, [], RetryAfter: TimeSpan.FromMilliseconds(Math.Max(1000, (long)answer[1])));
            default:
                // As in memory: what the topics are (missing, a companion, another epoch) is checked before what the write
                // asks of them (its kind, the version), and a missing topic outranks a companion, which outranks another epoch.
                var topicRefused = false;
                for (var i = 0; i < count; i++)
                {
                    topicRefused |= (long)answer[1 + 3 * i] is 0 or -1 or -4;
                }
                var status = PublishStatus.NotAttempted;
                for (var i = 0; i < count; i++)
                {
                    var epoch = (string?)answer[2 + 3 * i];
                    topics[i] = (long)answer[1 + 3 * i] switch
                    {
                        0 => new PublishResult(PublishStatus.TopicNotFound),
                        -1 => new PublishResult(PublishStatus.EpochMismatch, Epoch: epoch),
                        -4 => new PublishResult(PublishStatus.PresenceTopic),
                        -5 when !topicRefused => new PublishResult(PublishStatus.NotAPatch),
                        -6 when !topicRefused => new PublishResult(PublishStatus.VersionMismatch, (long)answer[3 + 3 * i], epoch),
                        -7 when !topicRefused => new PublishResult(PublishStatus.NotAStateTopic),
                        _ => new PublishResult(PublishStatus.NotAttempted),
                    };
                    status = (topics[i].Status, status) switch
                    {
                        (PublishStatus.NotAttempted, _) => status,
                        (PublishStatus.TopicNotFound, _) => PublishStatus.TopicNotFound,
                        (PublishStatus.PresenceTopic, not PublishStatus.TopicNotFound) => PublishStatus.PresenceTopic,
                        (_, PublishStatus.NotAttempted) => topics[i].Status,
                        _ => status,
                    };
                }
                return new MultiPublishResult(status, topics);
        }
    }

    /// <inheritdoc/>
    public async ValueTask ReadAsync(ReadOnlyMemory<TopicReadRequest> requests, Memory<TopicReadResult> results, List<Message> messages,
        CancellationToken cancellationToken = default)
    {
        var count = requests.Length;
        var database = (await ConnectionAsync().ConfigureAwait(false)).GetDatabase();
        // Sent together: StackExchange.Redis pipelines them on the one connection.
        var pending = new Task<RedisResult>[count];
        for (var i = 0; i < count; i++)
        {
            var request = requests.Span[i];
            pending[i] = Guard(database.ScriptEvaluateAsync(RedisScripts.Read, TopicKeys(request.TopicId),
                [request.FromMessageId, request.MaxMessages, Math.Min(request.MaxBytes, MaxExactLuaInteger), TtlMilliseconds, request.TopicId, TrackUse,
                    request.WithDocument ? 1 : 0]));
        }
        for (var i = 0; i < count; i++)
        {
            var result = await pending[i].ConfigureAwait(false);
            var topicId = requests.Span[i].TopicId;
            if (result.IsNull)
            {
                results.Span[i] = TopicReadResult.Missing;
                continue;
            }
            var values = (RedisResult[])result!;
            var epoch = (string)values[0]!;
            var last = (long)values[1];
            var first = (long)values[2];
            var state = (long)values[3] == 1;
            if (state && requests.Span[i].WithDocument)
            {
                results.Span[i] = new TopicReadResult(true, epoch, last, first, 0, State: true, Document: (byte[])values[4]!);
                continue;
            }
            for (var k = 5; k < values.Length; k++)
            {
                messages.Add(ToMessage(topicId, epoch, Math.Max(requests.Span[i].FromMessageId, first) + (k - 5), values[k]));
            }
            results.Span[i] = new TopicReadResult(true, epoch, last, first, values.Length - 5, state);
        }
    }

    /// <inheritdoc/>
    public async ValueTask<StoreStatistics> GetStatisticsAsync(CancellationToken cancellationToken = default)
    {
        var database = (await ConnectionAsync().ConfigureAwait(false)).GetDatabase();
        var topics = new Task<long>[_buckets.Length];
        var retained = new Task<RedisValue>[_buckets.Length];
        for (var b = 0; b < _buckets.Length; b++)
        {
            topics[b] = Guard(database.SortedSetLengthAsync(_buckets[b].Topics));
            retained[b] = Guard(database.StringGetAsync(_buckets[b].Retained));
        }
        long count = 0, bytes = 0;
        for (var b = 0; b < _buckets.Length; b++)
        {
            count += await topics[b].ConfigureAwait(false);
            bytes += (long?)await retained[b].ConfigureAwait(false) ?? 0;
        }
        return new StoreStatistics((int)Math.Min(int.MaxValue, count), bytes);
    }

    /// <summary>Closes its own connection; leaves the application's open, without this store's handlers and subscriptions.</summary>
    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        await _subscription.ConfigureAwait(false);
        await _sweepTimer.DisposeAsync().ConfigureAwait(false);
        // A connect still under way disposes its connection itself when it sees _stopping.
        if (Detach() is { } connection)
        {
            await connection.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>Closes its own connection; leaves the application's open, without this store's handlers and subscriptions.</summary>
    public void Dispose()
    {
        _stopping.Cancel();
        _sweepTimer.Dispose();
        Detach()?.Dispose();
    }

    /// <summary>Takes this store off its connection; returns the connection when it is the store's to dispose.</summary>
    private IConnectionMultiplexer? Detach()
    {
        if (Interlocked.Exchange(ref _connection, null) is not { } connection)
        {
            return null;
        }
        connection.ConnectionFailed -= OnConnectionFailed;
        connection.ConnectionRestored -= OnConnectionRestored;
        if (_ownsConnection)
        {
            return connection;
        }
        var subscriber = connection.GetSubscriber();
        foreach (var bucket in _buckets)
        {
            subscriber.Unsubscribe(bucket.Changes, OnChange, CommandFlags.FireAndForget);
        }
        return null;
    }

    /// <summary>
    /// A message from its stored form, or the very object this instance made for it before: then it
    /// already carries its wire encodings, and a message read by thousands of polls is encoded once.
    /// </summary>
    private Message ToMessage(long topicId, string epoch, long messageId, RedisResult stored)
    {
        var slot = _cache.Length == 0 ? -1 : (int)((ulong)HashCode.Combine(topicId, messageId) % (uint)_cache.Length);
        if (slot >= 0 && Volatile.Read(ref _cache[slot]) is { } cached
            && cached.TopicId == topicId && cached.MessageId == messageId && cached.Epoch == epoch)
        {
            return cached;
        }
        var entry = (byte[])stored!;
        var publishedAt = DateTimeOffset.FromUnixTimeMilliseconds(long.Parse(entry.AsSpan(0, 16), CultureInfo.InvariantCulture));
        var contentTypeEnd = entry.AsSpan(17).IndexOf((byte)'\n') + 17;
        // The content type's line may end with the publish's traceparent after a record separator (RedisScripts' remarks).
        var separator = entry.AsSpan(17, contentTypeEnd - 17).IndexOf(TraceParentSeparator);
        var contentType = Encoding.UTF8.GetString(entry, 17, (separator < 0 ? contentTypeEnd : separator + 17) - 17);
        var traceContext = separator >= 0
            && ActivityContext.TryParse(Encoding.ASCII.GetString(entry, separator + 18, contentTypeEnd - separator - 18), null, isRemote: true, out var parsed)
            ? parsed
            : default;
        var message = new Message(topicId, epoch, messageId, publishedAt, contentType, entry.AsMemory(contentTypeEnd + 1), traceContext);
        if (slot >= 0 && message.Body.Length <= CachedBodyLimit)
        {
            Cache(slot, message);
        }
        return message;
    }

    /// <summary>The W3C traceparent of a publish's trace context, stored with its message; empty (nothing stored) when it was not traced.</summary>
    private static string TraceParent(ActivityContext context) =>
        context == default ? "" : $"00-{context.TraceId.ToHexString()}-{context.SpanId.ToHexString()}-{(byte)context.TraceFlags:x2}";

    /// <summary>
    /// Puts <paramref name="message"/> in its slot in place of whatever was there, if its cost fits in
    /// <c>LocalCacheBytes</c> once the displaced one's is released; its encodings are charged there too.
    /// </summary>
    private void Cache(int slot, Message message)
    {
        if (Interlocked.Exchange(ref _cache[slot], null) is { } displaced)
        {
            Uncache(displaced);
        }
        if (!_cacheBudget.TryCharge(RetainedCost.Of(message)))
        {
            return;
        }
        // Set before the message is shared: its encodings then charge the cache.
        message.CountAgainst(_cacheBudget);
        if (Interlocked.CompareExchange(ref _cache[slot], message, null) is not null)
        {
            // Another read filled the slot meanwhile; that one stays.
            Uncache(message);
        }
    }

    private void Uncache(Message message)
    {
        message.Retire();
        _cacheBudget.Release(RetainedCost.Of(message));
    }

    /// <summary>
    /// Subscribes to topic changes, retrying every second while Redis cannot be reached (a server may
    /// start before its Redis). Once subscribed, StackExchange.Redis renews the subscription after every
    /// reconnection by itself.
    /// </summary>
    private async Task SubscribeAsync(IConnectionMultiplexer connection, CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                // Every bucket's shard channel, on the shard that holds the bucket (docs/scale-out.md says why all of them).
                var subscriber = connection.GetSubscriber();
                var subscribed = new Task[_buckets.Length];
                for (var b = 0; b < _buckets.Length; b++)
                {
                    subscribed[b] = subscriber.SubscribeAsync(_buckets[b].Changes, OnChange);
                }
                await Task.WhenAll(subscribed).ConfigureAwait(false);
                // Whatever changed before the subscription was in place: every waiting poll reads again.
                _signals.SignalAll();
                return;
            }
            catch (RedisConnectionException)
            {
                try
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), stopping).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }
    }

    private void OnChange(RedisChannel channel, RedisValue value)
    {
        if (value.TryParse(out long topicId))
        {
            _signals.Signal(topicId);
        }
    }

    /// <summary>Drops expired messages of topics nobody touches; every instance may run it, the script makes it idempotent.</summary>
    private async Task SweepAsync()
    {
        if (Volatile.Read(ref _connection) is not { IsConnected: true } || Interlocked.Exchange(ref _sweeping, 1) == 1)
        {
            return;
        }
        try
        {
            await NoticeLostKeyspaceAsync().ConfigureAwait(false);
            foreach (var bucket in _buckets)
            {
                while (await SweepBucketAsync(bucket).ConfigureAwait(false) == SweepBatch)
                {
                }
            }
        }
        catch (Exception exception)
        {
            Log.SweepFailed(_logger, exception);
        }
        finally
        {
            Volatile.Write(ref _sweeping, 0);
        }
    }

    /// <summary>
    /// Trims the bucket's topics whose oldest message expired and deletes its idle ones, each by a script
    /// that declares the topic's keys (pipelined); returns how many of either it found, at most a batch.
    /// </summary>
    private async Task<int> SweepBucketAsync(Bucket bucket)
    {
        var idle = (long)_options.TopicIdleTimeToLive.TotalMilliseconds;
        var due = (RedisResult[])(await RunAsync(RedisScripts.Due, [bucket.Expiry, bucket.Used], [SweepBatch, idle]).ConfigureAwait(false))!;
        var expired = (RedisResult[])due[0]!;
        var unused = (RedisResult[])due[1]!;
        var pending = new List<Task<RedisResult>>(expired.Length + unused.Length);
        foreach (var id in expired)
        {
            pending.Add(RunAsync(RedisScripts.Info, TopicKeys((long)id), [TtlMilliseconds, (long)id]));
        }
        foreach (var id in unused)
        {
            pending.Add(RunAsync(RedisScripts.Delete, DeleteKeys((long)id), [(long)id, bucket.ChangesName, idle, CompanionOf((long)id)]));
        }
        await Task.WhenAll(pending).ConfigureAwait(false);
        return Math.Max(expired.Length, unused.Length);
    }

    /// <summary>
    /// Wakes every waiting subscription when Redis lost this store's keys while the connection stayed up
    /// (FLUSHALL, FLUSHDB, a failover to a replica that never had them): no delete is announced then, and
    /// without this a stream would never learn its topics are gone, nor a poll before its timeout. Woken, they
    /// read again and are told topicDeleted. Runs with every sweep, so it is noticed within one
    /// RetentionSweepInterval, for one small script per interval. A fresh Redis wakes them once, for nothing.
    /// </summary>
    private async Task NoticeLostKeyspaceAsync()
    {
        // One mark per bucket: on a cluster, a shard may lose its buckets while the others keep theirs.
        var marks = new Task<RedisResult>[_buckets.Length];
        for (var b = 0; b < _buckets.Length; b++)
        {
            marks[b] = RunAsync(RedisScripts.MarkKeyspace, [_buckets[b].Keyspace], [Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(8))]);
        }
        bool lost = false, fresh = false;
        for (var b = 0; b < _buckets.Length; b++)
        {
            var result = (RedisResult[])(await marks[b].ConfigureAwait(false))!;
            var mark = (string)result[0]!;
            var seen = _keyspaceMarks[b];
            _keyspaceMarks[b] = mark;
            // Another instance may have set the new mark first: a mark other than the one seen last says the same.
            if ((long)result[1] == 1 || (seen is not null && seen != mark))
            {
                lost |= seen is not null;
                fresh = true;
            }
        }
        if (lost)
        {
            Log.KeyspaceLost(_logger);
        }
        if (fresh)
        {
            _signals.SignalAll();
        }
    }

    private static TopicInfo? ToTopicInfo(long topicId, RedisResult result)
    {
        if (result.IsNull)
        {
            return null;
        }
        var values = (RedisResult[])result!;
        var last = (long)values[2];
        var retained = (int)(long)values[3];
        var label = (string?)values[5];
        var presenceTopicId = (long)values[6];
        var presenceOf = (long)values[7];
        return new TopicInfo(topicId, (string)values[0]!, DateTimeOffset.FromUnixTimeMilliseconds((long)values[1]), last,
            last - retained + 1, retained, (long)values[4], Label: string.IsNullOrEmpty(label) ? null : label,
            PresenceTopicId: presenceTopicId == 0 ? null : presenceTopicId, PresenceOf: presenceOf == 0 ? null : presenceOf, State: (long)values[8] == 1);
    }

    private long TtlMilliseconds => (long)_options.MessageTimeToLive.TotalMilliseconds;

    /// <summary>Whether the scripts record when topics are used: only when idle topics are to be deleted.</summary>
    private int TrackUse => _options.TopicIdleTimeToLive > TimeSpan.Zero ? 1 : 0;

    /// <summary>The bucket that holds a topic: its id modulo the bucket count (RedisScripts' remarks).</summary>
    private Bucket BucketOf(long topicId) => _buckets[(int)(topicId % _buckets.Length)];

    /// <summary>
    /// The one place a topic's key name is built: every other key of the topic (its messages, and any key
    /// a feature adds per topic) is this name with a suffix, so it stays in the bucket's hash slot.
    /// </summary>
    private RedisKey MetaKey(long topicId) => BucketOf(topicId).Tag + "t:" + topicId.ToString(CultureInfo.InvariantCulture);

    private static RedisKey MessagesKey(RedisKey meta) => meta.Append(":m");

    /// <summary>A state topic's document (RedisScripts' remarks).</summary>
    private static RedisKey DocumentKey(RedisKey meta) => meta.Append(":s");

    /// <summary>KEYS of the scripts that read or publish one topic: meta, msgs, retained, expiry, used, era, document.</summary>
    private RedisKey[] TopicKeys(long topicId)
    {
        var bucket = BucketOf(topicId);
        var meta = MetaKey(topicId);
        return [meta, MessagesKey(meta), bucket.Retained, bucket.Expiry, bucket.Used, bucket.Era, DocumentKey(meta)];
    }

    /// <summary>
    /// KEYS of <see cref="RedisScripts.Delete"/>: topics, meta, msgs, retained, expiry, used, and what goes with a
    /// topic with presence: its companion's meta and msgs, the bucket's presence members, expiry and data; then the topic's document.
    /// </summary>
    private RedisKey[] DeleteKeys(long topicId)
    {
        var bucket = BucketOf(topicId);
        var meta = MetaKey(topicId);
        var companion = MetaKey(CompanionOf(topicId));
        return [bucket.Topics, meta, MessagesKey(meta), bucket.Retained, bucket.Expiry, bucket.Used, companion, MessagesKey(companion),
            bucket.PresenceMembers, bucket.PresenceExpiry, bucket.PresenceData, DocumentKey(meta)];
    }

    /// <summary>The keys and shard channel of one bucket; <paramref name="tag"/> is the key prefix and the bucket's hash tag.</summary>
    private sealed class Bucket(string tag)
    {
        public string Tag { get; } = tag;
        public RedisKey Topics { get; } = tag + "topics";
        public RedisKey Retained { get; } = tag + "retained";
        public RedisKey Expiry { get; } = tag + "expiry";
        public RedisKey Used { get; } = tag + "used";
        public RedisKey Keyspace { get; } = tag + "keyspace";
        public RedisKey Era { get; } = tag + "era";
        public RedisKey PresenceMembers { get; } = tag + "presence:members";
        public RedisKey PresenceExpiry { get; } = tag + "presence:expiry";
        public RedisKey PresenceData { get; } = tag + "presence:data";

        /// <summary>The shard channel its scripts SPUBLISH to: in the bucket's slot, so on the bucket's shard.</summary>
        public RedisChannel Changes { get; } = RedisChannel.Sharded(tag + "changes");

        public string ChangesName { get; } = tag + "changes";
    }

    private Task<RedisResult> RunAsync(string script, RedisKey[] keys, RedisValue[] values) =>
        Volatile.Read(ref _connection) is { } connection
            ? Guard(connection.GetDatabase().ScriptEvaluateAsync(script, keys, values))
            : ConnectAndRunAsync(script, keys, values);

    private async Task<RedisResult> ConnectAndRunAsync(string script, RedisKey[] keys, RedisValue[] values)
    {
        var connection = await ConnectionAsync().ConfigureAwait(false);
        return await Guard(connection.GetDatabase().ScriptEvaluateAsync(script, keys, values)).ConfigureAwait(false);
    }

    /// <summary>
    /// With <c>AcknowledgeReplicas</c>, waits (WAIT, on the primary that holds <paramref name="key"/>) until
    /// that many replicas have every write this connection made so far, the publish among them; throws
    /// the 503 exception when fewer confirm in time. WAIT cannot run inside a script.
    /// </summary>
    private async Task ConfirmReplicatedAsync(RedisKey key)
    {
        var wanted = _redisOptions.AcknowledgeReplicas;
        if (wanted == 0)
        {
            return;
        }
        var timeout = (long)_redisOptions.AcknowledgeTimeout.TotalMilliseconds;
        var confirmed = (long)await Guard((await ConnectionAsync().ConfigureAwait(false)).GetServer(key).ExecuteAsync("WAIT", [wanted, timeout], CommandFlags.DemandMaster)).ConfigureAwait(false);
        if (confirmed < wanted)
        {
            throw new LaharsubStoreUnavailableException("Redis",
                $"The message is stored on the Redis primary, but {confirmed} of the {wanted} replicas Laharsub:Redis:AcknowledgeReplicas asks for confirmed it within {_redisOptions.AcknowledgeTimeout}: it may be delivered, or lost in a failover. Retry with the same Idempotency-Key to publish it once.")
            { RetryAfter = _redisOptions.RetryAfter };
        }
    }

    /// <summary>Turns the client's connection failures and timeouts into the store-neutral exception the server answers 503 for.</summary>
    private async Task<T> Guard<T>(Task<T> command)
    {
        try
        {
            return await command.ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is RedisConnectionException or RedisTimeoutException or ObjectDisposedException
            // A Redis that is starting or lost its primary answers, but cannot serve yet; so does a cluster
            // whose shard is failing over (CLUSTERDOWN) or whose slot is moving (TRYAGAIN).
            || (exception is RedisServerException && (exception.Message.StartsWith("LOADING", StringComparison.Ordinal)
                || exception.Message.StartsWith("MASTERDOWN", StringComparison.Ordinal) || exception.Message.StartsWith("READONLY", StringComparison.Ordinal)
                || exception.Message.StartsWith("CLUSTERDOWN", StringComparison.Ordinal) || exception.Message.StartsWith("TRYAGAIN", StringComparison.Ordinal))))
        {
            throw new LaharsubStoreUnavailableException("Redis",
                $"Redis at {Endpoints} cannot be reached ({Summary(exception)}). Check that it runs and that Laharsub:Redis:Configuration points at it.",
                exception) { RetryAfter = _redisOptions.RetryAfter };
        }
    }

    /// <summary>The client's first clause, without the connection dump that follows it.</summary>
    private static string Summary(Exception exception)
    {
        var text = exception.Message;
        var end = text.IndexOfAny([';', '\n']);
        return end > 0 ? text[..end] : text;
    }

    /// <summary>The endpoints of the configuration, never its password.</summary>
    private string Endpoints => string.Join(",", (Volatile.Read(ref _connection)?.GetEndPoints() ?? ConfigurationOptions.Parse(_redisOptions.Configuration).EndPoints.ToArray())
        .Select(endpoint => endpoint.ToString()));
}
