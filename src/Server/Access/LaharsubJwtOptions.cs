namespace Laharsub.Server;

/// <summary>
/// How bearer tokens are validated (<c>Laharsub:Auth:Jwt</c>): signed with <see cref="SigningKey"/>
/// (HS256), with one of <see cref="PublicKeys"/> (RS256, ES256), or with a key that <see cref="Authority"/>
/// publishes. <c>iss</c>, <c>aud</c>, <c>exp</c> and <c>nbf</c> are always checked.
/// </summary>
public sealed class LaharsubJwtOptions
{
    /// <summary>The HS256 key as text, at least 32 bytes of UTF-8 (e.g. the output of <c>openssl rand -base64 32</c>).</summary>
    public string? SigningKey { get; set; }

    /// <summary>The <c>iss</c> tokens must carry; required unless <see cref="Authority"/> names it.</summary>
    public string? Issuer { get; set; }

    /// <summary>The <c>aud</c> tokens must carry (required in Jwt mode).</summary>
    public string? Audience { get; set; }

    /// <summary>
    /// An OpenID Connect issuer, e.g. <c>https://login.example.com/realms/main</c>: its discovery document names
    /// the issuer and its JWKS the RS256/ES256 keys, refreshed as the authority rotates them.
    /// </summary>
    public string? Authority { get; set; }

    /// <summary>Whether <see cref="Authority"/> must be https (default true; false only for a local test authority).</summary>
    public bool RequireHttpsMetadata { get; set; } = true;

    /// <summary>RS256 (RSA, 2048 bits or more) and ES256 (P-256) public keys: each a PEM text (<c>-----BEGIN PUBLIC KEY-----</c>…) or the path of a PEM file.</summary>
    public string[] PublicKeys { get; set; } = [];

    /// <summary>
    /// The signature algorithms accepted: <c>HS256</c>, <c>RS256</c>, <c>ES256</c>. Empty (the default): those
    /// the configured keys can check. <c>none</c> is never accepted.
    /// </summary>
    public string[] Algorithms { get; set; } = [];

    /// <summary>How far <c>exp</c> and <c>nbf</c> may be off to allow for clocks that differ (default 30 s, at most 5 minutes).</summary>
    public TimeSpan ClockSkew { get; set; } = TimeSpan.FromSeconds(30);
}
