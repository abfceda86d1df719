using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace Laharsub.Testing;

/// <summary>
/// Builds JWTs by hand (base64url JSON and System.Security.Cryptography), independently of the token
/// library the server uses, so that tests can also build the bad ones: unsigned, tampered, mis-signed.
/// </summary>
public static class TestTokens
{
    public const string Key = "test-signing-key-0123456789abcdef-0123456789";
    public const string Issuer = "https://issuer.test";
    public const string Audience = "laharsub-tests";

    /// <summary>Jwt-mode settings for <c>LaharsubTestServer.StartAsync(settings: ...)</c>.</summary>
    public static Dictionary<string, string?> JwtSettings(string? anonymous = null, params (string Key, string? Value)[] more)
    {
        var settings = new Dictionary<string, string?>
        {
            ["Laharsub:Auth:Mode"] = "Jwt",
            ["Laharsub:Auth:Jwt:SigningKey"] = Key,
            ["Laharsub:Auth:Jwt:Issuer"] = Issuer,
            ["Laharsub:Auth:Jwt:Audience"] = Audience,
        };
        if (anonymous is not null)
        {
            settings["Laharsub:Auth:Anonymous"] = anonymous;
        }
        foreach (var (key, value) in more)
        {
            settings[key] = value;
        }
        return settings;
    }

    /// <summary>The payload of a good token: right issuer and audience, valid from a minute ago for an hour.</summary>
    public static JsonObject Payload(string? laharsubClaim, string subject = "alice")
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        var payload = new JsonObject
        {
            ["iss"] = Issuer,
            ["aud"] = Audience,
            ["sub"] = subject,
            ["iat"] = now - 60,
            ["nbf"] = now - 60,
            ["exp"] = now + 3600,
        };
        if (laharsubClaim is not null)
        {
            payload["laharsub"] = JsonNode.Parse(laharsubClaim);
        }
        return payload;
    }

    /// <summary>An HS256 token signed with <paramref name="key"/> (the server's by default).</summary>
    public static string Hs256(JsonObject payload, string key = Key) =>
        Sign(new JsonObject { ["alg"] = "HS256", ["typ"] = "JWT" }, payload, input => HMACSHA256.HashData(Encoding.UTF8.GetBytes(key), input));

    public static string Grant(string laharsubClaim, string subject = "alice") => Hs256(Payload(laharsubClaim, subject));

    public static string Rs256(JsonObject payload, RSA rsa) =>
        Sign(new JsonObject { ["alg"] = "RS256", ["typ"] = "JWT" }, payload, input => rsa.SignData(input, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1));

    public static string Es256(JsonObject payload, ECDsa ecdsa) =>
        Sign(new JsonObject { ["alg"] = "ES256", ["typ"] = "JWT" }, payload, input => ecdsa.SignData(input, HashAlgorithmName.SHA256));

    /// <summary>An unsigned token (<c>alg: none</c>), which anyone could write.</summary>
    public static string WithoutSignature(JsonObject payload) =>
        $"{Encode(new JsonObject { ["alg"] = "none", ["typ"] = "JWT" })}.{Encode(payload)}.";

    /// <summary>A good token whose payload was changed after signing (here: a wider grant).</summary>
    public static string Tampered(string laharsubClaim, string widerClaim)
    {
        var parts = Grant(laharsubClaim).Split('.');
        return $"{parts[0]}.{Encode(Payload(widerClaim))}.{parts[2]}";
    }

    private static string Sign(JsonObject header, JsonObject payload, Func<byte[], byte[]> sign)
    {
        var input = $"{Encode(header)}.{Encode(payload)}";
        return $"{input}.{Base64Url(sign(Encoding.ASCII.GetBytes(input)))}";
    }

    private static string Encode(JsonNode node) => Base64Url(Encoding.UTF8.GetBytes(node.ToJsonString()));

    public static string Base64Url(byte[] bytes) => Convert.ToBase64String(bytes).TrimEnd('=').Replace('+', '-').Replace('/', '_');

    public static JsonObject WithoutClaim(this JsonObject payload, string name)
    {
        payload.Remove(name);
        return payload;
    }

    public static JsonObject With(this JsonObject payload, string name, JsonNode? value)
    {
        payload[name] = value;
        return payload;
    }

    /// <summary>A request carrying <paramref name="token"/> as a bearer token (none when null).</summary>
    public static HttpRequestMessage Request(HttpMethod method, string uri, string? token, HttpContent? content = null)
    {
        var request = new HttpRequestMessage(method, uri) { Content = content };
        if (token is not null)
        {
            request.Headers.Authorization = new System.Net.Http.Headers.AuthenticationHeaderValue("Bearer", token);
        }
        return request;
    }

    public static JsonElement ParseJson(string text) => JsonDocument.Parse(text).RootElement.Clone();
}
