using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Delivery;

internal sealed partial class PresenceSweeper
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 2603, EventName = "PresenceSweepFailed", Level = LogLevel.Warning, Message = "Sweeping expired presence leases failed; the next sweep tries again")]
        public static partial void SweepFailed(ILogger logger, Exception exception);
    }
}
