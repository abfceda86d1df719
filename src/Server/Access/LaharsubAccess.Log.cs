using Microsoft.Extensions.Logging;

namespace Laharsub.Server;

public static partial class LaharsubAccess
{
    private static partial class Log
    {
        [LoggerMessage(EventId = 20, EventName = "OpenMode", Level = LogLevel.Warning,
            Message = "Laharsub:Auth:Mode is Open: anyone who can reach this server may create, publish to, read, list and delete any topic. " +
                "To lock it down set Laharsub:Auth:Mode=Jwt with Laharsub:Auth:Jwt:SigningKey, Issuer and Audience (README, 'Lock it down'; docs/access-control.md).")]
        public static partial void OpenMode(ILogger logger);

        [LoggerMessage(EventId = 21, EventName = "JwtMode", Level = LogLevel.Information,
            Message = "Laharsub:Auth:Mode is Jwt: requests need a bearer token; without one they may do: {Anonymous}.")]
        public static partial void JwtMode(ILogger logger, string anonymous);

        [LoggerMessage(EventId = 23, EventName = "HostMode", Level = LogLevel.Information,
            Message = "Laharsub:Auth:Mode is Host: the application's authorization decides each operation on each topic (AuthorizationHandler<LaharsubRequirement, LaharsubTopic>); every request takes the application's pipeline.")]
        public static partial void HostMode(ILogger logger);

        [LoggerMessage(EventId = 25, EventName = "BackendMode", Level = LogLevel.Information,
            Message = "Laharsub:Auth:Mode is Backend: {Url} decides each operation on each topic, from the caller's Authorization and Cookie headers; no answer in time refuses. Every request takes the pipeline.")]
        public static partial void BackendMode(ILogger logger, string? url);

        [LoggerMessage(EventId = 22, EventName = "EndpointWithoutRule", Level = LogLevel.Error,
            Message = "Endpoint {Endpoint} has no access rule, so Jwt mode refuses every request to it with 403. Give it one in Access/LaharsubAccess.Classify.")]
        public static partial void EndpointWithoutRule(ILogger logger, string? endpoint);
    }
}
