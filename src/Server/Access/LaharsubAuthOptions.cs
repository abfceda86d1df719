namespace Laharsub.Server;

/// <summary>
/// Who may create, publish, subscribe, list and delete, bound from <c>Laharsub:Auth</c> and validated
/// at start. See docs/access-control.md.
/// </summary>
public sealed class LaharsubAuthOptions
{
    /// <summary>The configuration section these options are bound from.</summary>
    public const string SectionName = "Laharsub:Auth";

    /// <summary><see cref="LaharsubAuthMode.Open"/> (the default: no checks), <see cref="LaharsubAuthMode.Jwt"/>, <see cref="LaharsubAuthMode.Host"/> or <see cref="LaharsubAuthMode.Backend"/>.</summary>
    public LaharsubAuthMode Mode { get; set; } = LaharsubAuthMode.Open;

    /// <summary>
    /// In <see cref="LaharsubAuthMode.Jwt"/> mode, what requests without a token may do: a comma-separated
    /// list of operations (<c>create</c>, <c>publish</c>, <c>subscribe</c>, <c>list</c>, <c>delete</c>), each on
    /// every topic or, written <c>operation:pattern</c>, on the topics a pattern matches, e.g.
    /// <c>subscribe,list</c> for public read-only feeds or <c>subscribe:news-*</c>. Empty (the default): nothing.
    /// </summary>
    public string Anonymous { get; set; } = "";

    /// <summary>How tokens are validated.</summary>
    public LaharsubJwtOptions Jwt { get; set; } = new();

    /// <summary>
    /// In <see cref="LaharsubAuthMode.Host"/> and <see cref="LaharsubAuthMode.Backend"/> modes, how long an event stream or
    /// a WebSocket runs on the access decided when it opened (a socket's frames are decided each time) before it ends,
    /// telling its client to reconnect and resume, which is decided again: a permission the application revoked
    /// takes effect within this time. Default 5 minutes.
    /// </summary>
    public TimeSpan StreamDecisionLifetime { get; set; } = TimeSpan.FromMinutes(5);

    /// <summary>In <see cref="LaharsubAuthMode.Backend"/> mode, the application endpoint that decides.</summary>
    public LaharsubBackendOptions Backend { get; set; } = new();
}
