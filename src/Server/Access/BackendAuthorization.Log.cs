using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Access;

internal sealed partial class BackendAuthorization
{
    [LoggerMessage(EventId = 24, EventName = "BackendFailed", Level = LogLevel.Warning,
        Message = "The authorization backend {Url} gave no valid answer, so the request was refused (Laharsub:Auth:Mode=Backend fails closed): {Reason}.")]
    private static partial void Failed(ILogger logger, string? url, string reason);
}
