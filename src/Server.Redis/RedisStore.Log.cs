using System.Net;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;

namespace Laharsub.Server.Redis;

internal sealed partial class RedisStore
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 300, EventName = "ConnectionLost", Level = LogLevel.Warning, Message = "Redis connection to {EndPoint} lost ({FailureType}): requests that need Redis answer 503 until it is back. {Reason}")]
        public static partial void ConnectionLost(ILogger logger, EndPoint? endPoint, ConnectionFailureType failureType, string reason);

        [LoggerMessage(EventId = 301, EventName = "ConnectionRestored", Level = LogLevel.Information, Message = "Redis connection to {EndPoint} restored; waiting polls read again.")]
        public static partial void ConnectionRestored(ILogger logger, EndPoint? endPoint);

        [LoggerMessage(EventId = 302, EventName = "RedisFull", Level = LogLevel.Warning, Message = "Redis refused a message for lack of memory (its maxmemory): publishing answers 507. {Reason}")]
        public static partial void RedisFull(ILogger logger, string reason);

        [LoggerMessage(EventId = 303, EventName = "RedisSweepFailed", Level = LogLevel.Warning, Message = "The Redis retention sweep failed; it runs again at the next interval.")]
        public static partial void SweepFailed(ILogger logger, Exception exception);

        [LoggerMessage(EventId = 304, EventName = "KeyspaceLost", Level = LogLevel.Warning, Message = "Redis lost this store's keys (a FLUSHALL or FLUSHDB, or a failover to a replica without them): every topic is gone, and waiting subscriptions are told so.")]
        public static partial void KeyspaceLost(ILogger logger);

        [LoggerMessage(EventId = 305, EventName = "OneBucketOnACluster", Level = LogLevel.Warning, Message = "Laharsub:Redis:Buckets is 1 on a Redis Cluster of {Primaries} primaries: every topic is kept in one hash slot, so one shard serves them all. Set Laharsub:Redis:Buckets={Recommended} (several buckets per shard) before the first topic is created: the value is fixed for the life of the data (docs/scale-out.md).")]
        public static partial void OneBucketOnACluster(ILogger logger, int primaries, int recommended);

        [LoggerMessage(EventId = 306, EventName = "RedisConnectFailed", Level = LogLevel.Warning, Message = "Connecting to Redis failed: {Reason} Requests that need Redis answer 503, and the next one tries again.")]
        public static partial void ConnectFailed(ILogger logger, string reason);

        [LoggerMessage(EventId = 307, EventName = "StateWriteConflict", Level = LogLevel.Debug, Message = "A write to state topic {TopicId} found its document changed by another write (attempt {Attempt}); it is applied to the new document.")]
        public static partial void StateWriteConflict(ILogger logger, long topicId, int attempt);
    }
}
