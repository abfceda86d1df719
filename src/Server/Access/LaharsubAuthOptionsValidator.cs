using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Access;

/// <summary>
/// Refuses, at start, settings that would leave Jwt mode weak or unusable: no key, a short HS256 key,
/// <c>alg: none</c>, small RSA keys, missing issuer or audience. Each message names the setting.
/// </summary>
internal sealed class LaharsubAuthOptionsValidator : IValidateOptions<LaharsubAuthOptions>
{
    public const int MinSigningKeyBytes = 32;
    public const int MinRsaKeyBits = 2048;

    public static readonly string[] SupportedAlgorithms = ["HS256", "RS256", "ES256"];

    public ValidateOptionsResult Validate(string? name, LaharsubAuthOptions options)
    {
        var failures = new List<string>();
        if (!Enum.IsDefined(options.Mode))
        {
            failures.Add($"Laharsub:Auth:Mode is {options.Mode}: use Open, Jwt, Host or Backend.");
        }
        if (options.StreamDecisionLifetime < TimeSpan.FromSeconds(1))
        {
            failures.Add($"Laharsub:Auth:StreamDecisionLifetime is {options.StreamDecisionLifetime}: use at least one second (the default is 00:05:00).");
        }
        if (options.Mode == LaharsubAuthMode.Backend)
        {
            var backend = options.Backend;
            if (!Uri.TryCreate(backend.Url, UriKind.Absolute, out var url) || (url.Scheme != Uri.UriSchemeHttp && url.Scheme != Uri.UriSchemeHttps))
            {
                failures.Add($"Laharsub:Auth:Mode is Backend but Laharsub:Auth:Backend:Url is '{backend.Url}': set the absolute http or https URL of your application's endpoint that decides, e.g. http://127.0.0.1:8080/laharsub/authorize.");
            }
            if (backend.Timeout <= TimeSpan.Zero || backend.Timeout > TimeSpan.FromSeconds(30))
            {
                failures.Add($"Laharsub:Auth:Backend:Timeout is {backend.Timeout}: use a time above zero and at most 30 seconds (the default is 00:00:02).");
            }
            if (backend.MaxCacheTime < TimeSpan.Zero)
            {
                failures.Add($"Laharsub:Auth:Backend:MaxCacheTime is {backend.MaxCacheTime}: use zero (ask every time) or more.");
            }
        }
        if (options.Mode is LaharsubAuthMode.Host or LaharsubAuthMode.Backend && !string.IsNullOrWhiteSpace(options.Anonymous))
        {
            failures.Add($"Laharsub:Auth:Anonymous is set, but Laharsub:Auth:Mode is {options.Mode}, where the application decides for anonymous callers too: remove the setting and decide there.");
        }
        if (!LaharsubPermissions.TryParseAnonymous(options.Anonymous, out _, out var anonymousError))
        {
            failures.Add(anonymousError!);
        }
        var jwt = options.Jwt;
        foreach (var algorithm in jwt.Algorithms ?? [])
        {
            if (algorithm.Equals("none", StringComparison.OrdinalIgnoreCase))
            {
                failures.Add("Laharsub:Auth:Jwt:Algorithms contains 'none': unsigned tokens would let anyone claim any permission. Remove it; use HS256, RS256 or ES256.");
            }
            else if (!SupportedAlgorithms.Contains(algorithm, StringComparer.Ordinal))
            {
                failures.Add($"Laharsub:Auth:Jwt:Algorithms contains '{algorithm}': use HS256, RS256 or ES256.");
            }
        }
        if (jwt.SigningKey is { } key && Encoding.UTF8.GetByteCount(key) < MinSigningKeyBytes)
        {
            failures.Add($"Laharsub:Auth:Jwt:SigningKey is {Encoding.UTF8.GetByteCount(key)} bytes: an HS256 key needs at least {MinSigningKeyBytes} bytes (256 bits), or tokens can be forged by guessing it. Use random text such as the output of 'openssl rand -base64 32'.");
        }
        if (jwt.ClockSkew < TimeSpan.Zero || jwt.ClockSkew > TimeSpan.FromMinutes(5))
        {
            failures.Add($"Laharsub:Auth:Jwt:ClockSkew is {jwt.ClockSkew}: use 00:00:00 to 00:05:00.");
        }
        for (var i = 0; i < (jwt.PublicKeys ?? []).Length; i++)
        {
            if (!TryLoadPublicKey(jwt.PublicKeys![i], out var loaded, out var keyError))
            {
                failures.Add($"Laharsub:Auth:Jwt:PublicKeys:{i}: {keyError}");
            }
            else
            {
                (loaded as IDisposable)?.Dispose();
            }
        }
        if (jwt.Authority is { } authority && !(Uri.TryCreate(authority, UriKind.Absolute, out var uri) && (uri.Scheme == Uri.UriSchemeHttps || (uri.Scheme == Uri.UriSchemeHttp && !jwt.RequireHttpsMetadata))))
        {
            failures.Add($"Laharsub:Auth:Jwt:Authority is '{authority}': use the https address of an OpenID Connect issuer (http only with Laharsub:Auth:Jwt:RequireHttpsMetadata=false, for a local test authority).");
        }
        if (options.Mode == LaharsubAuthMode.Jwt)
        {
            if (string.IsNullOrEmpty(jwt.SigningKey) && (jwt.PublicKeys ?? []).Length == 0 && string.IsNullOrEmpty(jwt.Authority))
            {
                failures.Add("Laharsub:Auth:Mode is Jwt but no key is configured: set Laharsub:Auth:Jwt:SigningKey (HS256), Laharsub:Auth:Jwt:PublicKeys (RS256/ES256) or Laharsub:Auth:Jwt:Authority (an OpenID Connect issuer's JWKS).");
            }
            if (string.IsNullOrEmpty(jwt.Audience))
            {
                failures.Add("Laharsub:Auth:Mode is Jwt but Laharsub:Auth:Jwt:Audience is not set: name the audience (aud) your tokens are issued for, e.g. 'laharsub'.");
            }
            if (string.IsNullOrEmpty(jwt.Issuer) && string.IsNullOrEmpty(jwt.Authority))
            {
                failures.Add("Laharsub:Auth:Mode is Jwt but Laharsub:Auth:Jwt:Issuer is not set: name the issuer (iss) of your tokens, or set Laharsub:Auth:Jwt:Authority.");
            }
            foreach (var algorithm in jwt.Algorithms ?? [])
            {
                if (algorithm == "HS256" && string.IsNullOrEmpty(jwt.SigningKey))
                {
                    failures.Add("Laharsub:Auth:Jwt:Algorithms contains HS256 but Laharsub:Auth:Jwt:SigningKey is not set.");
                }
            }
        }
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    /// <summary>Loads a PEM public key (text, or a file's path): RSA of at least 2048 bits, or EC on P-256.</summary>
    public static bool TryLoadPublicKey(string textOrPath, out AsymmetricAlgorithm? key, out string? error)
    {
        key = null;
        error = null;
        string pem;
        if (textOrPath.TrimStart().StartsWith("-----BEGIN", StringComparison.Ordinal))
        {
            pem = textOrPath;
        }
        else if (File.Exists(textOrPath))
        {
            pem = File.ReadAllText(textOrPath);
        }
        else
        {
            error = $"'{(textOrPath.Length > 60 ? textOrPath[..60] + "..." : textOrPath)}' is neither PEM text (-----BEGIN PUBLIC KEY-----) nor the path of a PEM file.";
            return false;
        }
        var rsa = RSA.Create();
        try
        {
            rsa.ImportFromPem(pem);
            if (rsa.KeySize < MinRsaKeyBits)
            {
                error = $"the RSA key has {rsa.KeySize} bits; RS256 needs at least {MinRsaKeyBits}.";
                rsa.Dispose();
                return false;
            }
            key = rsa;
            return true;
        }
        catch (Exception exception) when (exception is ArgumentException or CryptographicException)
        {
            rsa.Dispose();
        }
        var ec = ECDsa.Create();
        try
        {
            ec.ImportFromPem(pem);
            var curve = ec.ExportParameters(false).Curve;
            if (curve.Oid.FriendlyName is not ("nistP256" or "ECDSA_P256") && curve.Oid.Value != "1.2.840.10045.3.1.7")
            {
                error = $"the EC key is on curve {curve.Oid.FriendlyName ?? curve.Oid.Value}; ES256 needs P-256.";
                ec.Dispose();
                return false;
            }
            key = ec;
            return true;
        }
        catch (Exception exception) when (exception is ArgumentException or CryptographicException)
        {
            ec.Dispose();
            error = "it holds no RSA or EC public key in PEM form (-----BEGIN PUBLIC KEY-----).";
            return false;
        }
    }
}
