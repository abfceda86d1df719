using System.Security.Claims;
using Laharsub.Server.Access;

namespace Laharsub.Server.FastPath;

/// <summary>
/// Jwt mode on the fast path: a request's caller is anonymous (no token) or the identity of a token that the
/// pipeline validated before (its JwtBearer scheme caches each one until its <c>exp</c>). A token not in that
/// cache goes to the pipeline, which validates it, answers, and caches it for the next request.
/// </summary>
internal sealed class TokenCallers(AccessTokenCache validated, LaharsubPermissions anonymous, TopicAccess access)
{
    /// <summary>What a request without a token may do (<c>Laharsub:Auth:Anonymous</c>).</summary>
    public LaharsubPermissions Anonymous => anonymous;

    public TopicAccess Access => access;

    /// <summary>The caller of a token the pipeline has validated and still holds, whose identity is a <see cref="LaharsubIdentity"/>; null otherwise.</summary>
    public ClaimsPrincipal? Validated(string token) =>
        validated.TryGet(token, out var principal) && principal?.Identity is LaharsubIdentity ? principal : null;
}
