using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Hosting;

internal sealed partial class BadRequestExceptionHandler
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 5, EventName = "BadRequest", Level = LogLevel.Warning, Message = "Refused a malformed request with {StatusCode}: {Method} {Path}: {Reason}")]
        public static partial void BadRequest(ILogger logger, int statusCode, string method, PathString path, string reason);
    }
}
