using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Delivery;

internal sealed partial class PresenceLeases
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 2601, EventName = "RenewalFailed", Level = LogLevel.Warning, Message = "Renewing a presence lease on topic {TopicId} failed; the next renewal tries again")]
        public static partial void RenewalFailed(ILogger logger, Exception exception, long topicId);
    }
}
