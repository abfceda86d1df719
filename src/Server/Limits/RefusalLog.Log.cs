using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Limits;

internal sealed partial class RefusalLog
{
    [LoggerMessage(EventId = 34, EventName = "Refusing", Level = LogLevel.Warning,
        Message = "{Setting} ({Limit}) refused {Refused} requests or connections since this was last logged (at most once a minute), the latest from {Client}.")]
    private static partial void Refusing(ILogger logger, string setting, int limit, string client, int refused);

    [LoggerMessage(EventId = 35, EventName = "RefusingConnections", Level = LogLevel.Warning,
        Message = "{Setting} ({Limit}) refused {Refused} connections since this was last logged (at most once a minute): the server holds as many as it has room for. Raise the open-file limit (ulimit -n) or add instances; the per-client caps (Laharsub:Limits) keep one client from taking them all.")]
    private static partial void RefusingConnections(ILogger logger, string setting, int limit, int refused);
}
