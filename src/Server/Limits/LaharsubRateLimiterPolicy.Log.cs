using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Limits;

internal sealed partial class LaharsubRateLimiterPolicy
{
    internal sealed partial class BypassWarning
    {
        [LoggerMessage(EventId = 10, EventName = "RateLimiterMissing", Level = LogLevel.Warning,
            Message = "Laharsub:RateLimit is set, but requests reach Laharsub without passing the rate limiter: call app.UseRateLimiter() before app.MapLaharsub(). Until then only publishes on WebSockets are limited.")]
        private static partial void RateLimiterMissing(ILogger logger);
    }
}
