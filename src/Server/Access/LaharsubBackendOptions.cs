namespace Laharsub.Server;

/// <summary>
/// Backend mode (<c>Laharsub:Auth:Backend</c>): Laharsub asks the application's own HTTP endpoint whether a caller
/// may do an operation on a topic, forwarding the caller's <c>Authorization</c> and <c>Cookie</c> headers, and keeps
/// each answer for the time the answer gives (at most <see cref="MaxCacheTime"/>). See docs/access-control.md,
/// "A backend decides".
/// </summary>
public sealed class LaharsubBackendOptions
{
    /// <summary>The endpoint asked, an absolute <c>http</c> or <c>https</c> URL, e.g. <c>http://127.0.0.1:8080/laharsub/authorize</c>.</summary>
    public string? Url { get; set; }

    /// <summary>How long an answer may take (default 2 s, at most 30 s); a slower or failed one is a refusal (it fails closed).</summary>
    public TimeSpan Timeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>The longest an answer is kept for the same credentials, operation and topic (default 1 minute; zero: ask every time).</summary>
    public TimeSpan MaxCacheTime { get; set; } = TimeSpan.FromMinutes(1);
}
