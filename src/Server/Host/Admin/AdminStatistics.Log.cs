using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Host.Admin;

internal sealed partial class AdminStatistics
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 70, EventName = "AdminStatisticsWithoutStore", Level = LogLevel.Debug, Message = "Admin statistics without the store's counts: {Reason}")]
        public static partial void StoreUnavailable(ILogger logger, string reason);
    }
}
