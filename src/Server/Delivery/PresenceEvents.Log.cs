using Laharsub.Server.Storage;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Delivery;

internal sealed partial class PresenceEvents
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 2602, EventName = "EventNotPublished", Level = LogLevel.Warning, Message = "The presence event {Type} of {Member} was not published to companion topic {CompanionId}: {Status}")]
        public static partial void EventNotPublished(ILogger logger, string type, string member, long companionId, PublishStatus status);
    }
}
