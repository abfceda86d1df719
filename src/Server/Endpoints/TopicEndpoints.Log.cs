using Laharsub.Server.Storage;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Endpoints;

internal static partial class TopicEndpoints
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 1, EventName = "TopicCreated", Level = LogLevel.Information, Message = "Topic {TopicId} created.")]
        public static partial void TopicCreated(ILogger logger, long topicId);

        [LoggerMessage(EventId = 2, EventName = "TopicDeleted", Level = LogLevel.Information, Message = "Topic {TopicId} deleted.")]
        public static partial void TopicDeleted(ILogger logger, long topicId);

        [LoggerMessage(EventId = 3, EventName = "TopicLimitReached", Level = LogLevel.Warning, Message = "Topic limit of {MaxTopics} reached: a topic was refused (Laharsub:MaxTopics).")]
        public static partial void TopicLimitReached(ILogger logger, int maxTopics);

        [LoggerMessage(EventId = 4, EventName = "StorageFull", Level = LogLevel.Warning, Message = "Retention is full ({RetainedBytes} bytes, Laharsub:MaxRetainedBytes): a message to topic {TopicId} was refused with 507.")]
        public static partial void StorageFull(ILogger logger, long retainedBytes, long topicId);
    }
}
