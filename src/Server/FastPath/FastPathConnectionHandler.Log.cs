using Microsoft.Extensions.Logging;

namespace Laharsub.Server.FastPath;

internal sealed partial class FastPathConnectionHandler
{
    [LoggerMessage(EventId = 60, EventName = "FastPathFailed", Level = LogLevel.Error, Message = "The fast path failed answering {Method} on connection {ConnectionId}; the connection was closed.")]
    internal static partial void Failed(ILogger logger, Exception exception, string method, string connectionId);

    [LoggerMessage(EventId = 62, EventName = "FastPathServes", Level = LogLevel.Information, Message = "Laharsub's fast path serves polls, streams and publishes under {Prefix} below the pipeline: middleware the host added to the pipeline does not run for them (Laharsub:FastPath:Enabled=false turns it off).")]
    private static partial void Serves(ILogger logger, string prefix);

    [LoggerMessage(EventId = 63, EventName = "FastPathStepsAside", Level = LogLevel.Warning, Message = "Laharsub:FastPath:Enabled is on, but the fast path steps aside for {Prefix}: its endpoints carry what only the pipeline applies ({Reasons}). Every request takes the pipeline.")]
    private static partial void StepsAside(ILogger logger, string prefix, string reasons);

    [LoggerMessage(EventId = 61, EventName = "FastPathStoreUnavailable", Level = LogLevel.Warning, Message = "{Store} unavailable: a fast-path poll was answered 503. {Reason}")]
    internal static partial void StoreUnavailable(ILogger logger, string store, string reason);
}
