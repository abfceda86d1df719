using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Hosting;

internal sealed partial class StoreUnavailableHandler
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 11, EventName = "StoreUnavailable", Level = LogLevel.Warning, Message = "{Store} unavailable: {Method} {Path} answered 503. {Reason}")]
        public static partial void StoreUnavailable(ILogger logger, string store, string method, PathString path, string reason);
    }
}
