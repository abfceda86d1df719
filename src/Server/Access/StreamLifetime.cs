namespace Laharsub.Server.Access;

/// <summary>
/// How long a stream (an event stream or a WebSocket) runs on the access decided when it opened: until its token
/// expires (Jwt mode), or for <see cref="LaharsubAuthOptions.StreamDecisionLifetime"/> (Host and Backend modes,
/// <paramref name="Redecide"/>), after which its client reconnects and is decided again.
/// </summary>
internal readonly record struct StreamLifetime(DateTimeOffset EndsAt, bool Redecide);
