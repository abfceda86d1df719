using System.Security.Claims;

namespace Laharsub.Server.Access;

/// <summary>A validated token's identity with its <c>laharsub</c> claim parsed once, when the token was validated.</summary>
internal sealed class LaharsubIdentity(ClaimsIdentity validated, LaharsubPermissions permissions) : ClaimsIdentity(validated)
{
    public LaharsubPermissions Permissions { get; } = permissions;

    /// <summary>The token's subject (<c>sub</c>), which rate limits are counted by.</summary>
    public string? Subject { get; } = validated.FindFirst("sub")?.Value;

    /// <summary>When the token expires (<c>exp</c>): a stream it opened ends then.</summary>
    public DateTimeOffset? ExpiresAt { get; } =
        long.TryParse(validated.FindFirst("exp")?.Value, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var seconds)
            ? DateTimeOffset.FromUnixTimeSeconds(seconds)
            : null;
}
