using System.Security.Claims;

namespace Laharsub.Server.Access;

/// <summary>A validated token's identity with its <c>laharsub</c> claim parsed once, when the token was validated.</summary>
internal sealed class LaharsubIdentity(ClaimsIdentity validated, LaharsubPermissions permissions) : ClaimsIdentity(validated)
{
    public LaharsubPermissions Permissions { get; } = permissions;

    /// <summary>The token's subject (<c>sub</c>), which rate limits are counted by.</summary>
    public string? Subject { get; } = validated.FindFirst("sub")?.Value;
}
