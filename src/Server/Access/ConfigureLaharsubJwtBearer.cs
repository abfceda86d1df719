using System.Text;
using Microsoft.AspNetCore.Authentication.JwtBearer;
using Microsoft.Extensions.Options;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

namespace Laharsub.Server.Access;

/// <summary>
/// Builds the JwtBearer scheme <see cref="LaharsubAccess.SchemeName"/> from <c>Laharsub:Auth:Jwt</c>:
/// keys, accepted algorithms, <c>iss</c>/<c>aud</c>/<c>exp</c>/<c>nbf</c> checks, and the per-token cache.
/// </summary>
internal sealed class ConfigureLaharsubJwtBearer(IOptions<LaharsubAuthOptions> auth, AccessTokenCache cache)
    : IConfigureNamedOptions<JwtBearerOptions>
{
    private readonly LaharsubPermissions _anonymous =
        LaharsubPermissions.TryParseAnonymous(auth.Value.Anonymous, out var anonymous, out _) ? anonymous : LaharsubPermissions.None;

    public void Configure(JwtBearerOptions options) => Configure(Options.DefaultName, options);

    public void Configure(string? name, JwtBearerOptions options)
    {
        if (name != LaharsubAccess.SchemeName)
        {
            return;
        }
        var jwt = auth.Value.Jwt;
        var keys = new List<SecurityKey>();
        var algorithms = new List<string>();
        if (!string.IsNullOrEmpty(jwt.SigningKey))
        {
            keys.Add(new SymmetricSecurityKey(Encoding.UTF8.GetBytes(jwt.SigningKey)));
            algorithms.Add(SecurityAlgorithms.HmacSha256);
        }
        foreach (var text in jwt.PublicKeys ?? [])
        {
            // Validated at start, so loading cannot fail here.
            LaharsubAuthOptionsValidator.TryLoadPublicKey(text, out var key, out _);
            if (key is System.Security.Cryptography.RSA rsa)
            {
                keys.Add(new RsaSecurityKey(rsa));
                algorithms.Add(SecurityAlgorithms.RsaSha256);
            }
            else if (key is System.Security.Cryptography.ECDsa ec)
            {
                keys.Add(new ECDsaSecurityKey(ec));
                algorithms.Add(SecurityAlgorithms.EcdsaSha256);
            }
        }
        if (!string.IsNullOrEmpty(jwt.Authority))
        {
            options.Authority = jwt.Authority;
            options.RequireHttpsMetadata = jwt.RequireHttpsMetadata;
            algorithms.Add(SecurityAlgorithms.RsaSha256);
            algorithms.Add(SecurityAlgorithms.EcdsaSha256);
        }
        if (jwt.Algorithms is { Length: > 0 } configured)
        {
            algorithms = [.. configured];
        }

        options.MapInboundClaims = false;
        options.TokenValidationParameters = new TokenValidationParameters
        {
            ValidateIssuer = true,
            ValidIssuer = string.IsNullOrEmpty(jwt.Issuer) ? null : jwt.Issuer,
            ValidateAudience = true,
            ValidAudience = jwt.Audience,
            ValidateLifetime = true,
            RequireExpirationTime = true,
            RequireSignedTokens = true,
            ClockSkew = jwt.ClockSkew,
            IssuerSigningKeys = keys,
            ValidAlgorithms = algorithms.Distinct().ToArray(),
            NameClaimType = "sub",
        };
        options.Events = new JwtBearerEvents
        {
            OnMessageReceived = UseCachedValidation,
            OnTokenValidated = ParsePermissions,
        };
    }

    /// <summary>Answers from the cache for a token validated before; otherwise hands the token on to be validated.</summary>
    private Task UseCachedValidation(MessageReceivedContext context)
    {
        string? authorization = context.Request.Headers.Authorization;
        string token;
        if (authorization is not null && authorization.StartsWith("Bearer ", StringComparison.OrdinalIgnoreCase))
        {
            token = authorization["Bearer ".Length..].Trim();
        }
        else if (authorization is null && AccessControl.HasQueryToken(context.Request)
            && context.Request.Query[AccessControl.AccessTokenParameter] is [{ Length: > 0 } fromQuery])
        {
            // A browser's EventSource or WebSocket cannot set Authorization (docs/protocol.md, "Tokens on streams").
            token = fromQuery;
        }
        else
        {
            return Task.CompletedTask;
        }
        if (cache.TryGet(token, out var principal))
        {
            context.Principal = principal;
            context.Success();
        }
        else
        {
            context.Token = token;
        }
        return Task.CompletedTask;
    }

    private Task ParsePermissions(TokenValidatedContext context)
    {
        var identity = context.Principal?.Identities.FirstOrDefault();
        if (identity is null)
        {
            context.Fail("the token carries no identity");
            return Task.CompletedTask;
        }
        var permissions = LaharsubPermissions.None;
        if (identity.FindFirst(LaharsubPermissions.ClaimType) is { } claim
            && !LaharsubPermissions.TryParseClaim(claim.Value, out permissions, out var error))
        {
            context.Fail(new LaharsubClaimException(error!));
            return Task.CompletedTask;
        }
        // Anything anonymous callers may do, a token may do too.
        var principal = new System.Security.Claims.ClaimsPrincipal(new LaharsubIdentity(identity, permissions.Union(_anonymous)));
        context.Principal = principal;
        if (context.SecurityToken is JsonWebToken token)
        {
            cache.Add(token.EncodedToken, principal, new DateTimeOffset(token.ValidTo, TimeSpan.Zero));
        }
        return Task.CompletedTask;
    }
}
