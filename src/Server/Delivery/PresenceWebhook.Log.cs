using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Delivery;

internal sealed partial class PresenceWebhook
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 2604, EventName = "DroppedFull", Level = LogLevel.Warning,
            Message = "Presence webhook call {Type} of topic {TopicId} dropped: {MaxOutstanding} calls already wait (Laharsub:Presence:Webhook:MaxOutstanding)")]
        public static partial void DroppedFull(ILogger logger, string type, long topicId, int maxOutstanding);

        [LoggerMessage(EventId = 2605, EventName = "DroppedFailed", Level = LogLevel.Warning, Message = "Presence webhook call dropped after {Attempts} attempts; the last failed with {Failure}")]
        public static partial void DroppedFailed(ILogger logger, int attempts, string failure);

        [LoggerMessage(EventId = 2606, EventName = "Retrying", Level = LogLevel.Information, Message = "Presence webhook attempt {Attempt} failed with {Failure}; retrying in {Delay}")]
        public static partial void Retrying(ILogger logger, int attempt, string failure, TimeSpan delay);
    }
}
