using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Limits;

internal sealed partial class ConnectionLimitSetup
{
    [LoggerMessage(EventId = 30, EventName = "Derived", Level = LogLevel.Information,
        Message = "Kestrel:Limits:MaxConcurrentConnections is {Connections}: the open-file limit (ulimit -n) of {OpenFileLimit} minus {OpenAtStart} files open at start and {Reserved} kept for the server itself; one client address may hold {PerClient} of them (Laharsub:Limits:MaxConnectionsPerClient). Set either to choose another value.")]
    private static partial void Derived(ILogger logger, long connections, long openFileLimit, int openAtStart, int reserved, string perClient);

    [LoggerMessage(EventId = 31, EventName = "PerClient", Level = LogLevel.Information,
        Message = "Laharsub:Limits:MaxConnectionsPerClient is {PerClient} (of {Connections} connections in all).")]
    private static partial void PerClient(ILogger logger, string perClient, string connections);

    [LoggerMessage(EventId = 32, EventName = "OpenFileLimitTooLow", Level = LogLevel.Warning,
        Message = "The open-file limit (ulimit -n) of {OpenFileLimit} leaves room for only {Connections} connections after the {OpenAtStart} files open at start and those the server needs for itself: raise it (ulimit -n, LimitNOFILE= in systemd, --ulimit nofile= in Docker).")]
    private static partial void OpenFileLimitTooLow(ILogger logger, long openFileLimit, int openAtStart, long connections);

    [LoggerMessage(EventId = 33, EventName = "ExplicitAboveOpenFileLimit", Level = LogLevel.Warning,
        Message = "Kestrel:Limits:MaxConcurrentConnections is {Connections}, more than the {Allowed} connections the open-file limit (ulimit -n) of {OpenFileLimit} leaves room for: once clients hold that many, the server runs out of file descriptors and may crash or stop accepting. Lower the setting or raise the limit.")]
    private static partial void ExplicitAboveOpenFileLimit(ILogger logger, string connections, long openFileLimit, long allowed);
}
