using System.Net;
using System.Security.Cryptography;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Access;

/// <summary>Every way a token can be bad gets 401 with WWW-Authenticate and a problem detail, and changes nothing.</summary>
public sealed class TokenValidationTests(JwtServerFixture fixture) : IClassFixture<JwtServerFixture>
{
    private const string PublishAnything = """{"publish":["*"]}""";

    public static TheoryData<string, string, string> BadTokens
    {
        get
        {
            var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
            var rsa = RSA.Create(2048);
            return new()
            {
                { "expired", TestTokens.Hs256(TestTokens.Payload(PublishAnything).With("exp", now - 3600).With("nbf", now - 7200)), "expired" },
                { "not yet valid", TestTokens.Hs256(TestTokens.Payload(PublishAnything).With("nbf", now + 3600).With("exp", now + 7200)), "not valid before" },
                { "wrong issuer", TestTokens.Hs256(TestTokens.Payload(PublishAnything).With("iss", "https://elsewhere.test")), "issuer" },
                { "wrong audience", TestTokens.Hs256(TestTokens.Payload(PublishAnything).With("aud", "another-service")), "audience" },
                { "no expiry", TestTokens.Hs256(TestTokens.Payload(PublishAnything).WithoutClaim("exp")), "expiry" },
                { "wrong key", TestTokens.Hs256(TestTokens.Payload(PublishAnything), key: "another-key-of-sufficient-length-0123456789"), "signature" },
                { "alg none", TestTokens.WithoutSignature(TestTokens.Payload(PublishAnything)), "signature" },
                { "tampered payload", TestTokens.Tampered("""{"subscribe":["1"]}""", PublishAnything), "signature" },
                { "RS256 with a key the server does not know", TestTokens.Rs256(TestTokens.Payload(PublishAnything), rsa), "signature" },
                { "not a JWT", "not.a.jwt", "well-formed" },
                { "malformed laharsub claim", TestTokens.Grant("""{"pubish":["*"]}"""), "'pubish'" },
                { "pattern that is no pattern", TestTokens.Grant("""{"publish":["orders eu"]}"""), "orders eu" },
                { "create granted by id", TestTokens.Grant("""{"create":["14"]}"""), "label pattern" },
                { "admin granted on a topic", TestTokens.Grant("""{"admin":["14"]}"""), "admin is no topic permission" },
            };
        }
    }

    [Theory]
    [MemberData(nameof(BadTokens))]
    public async Task ABadTokenGets401WithWwwAuthenticateAndChangesNothing(string why, string token, string explanation)
    {
        var topic = await fixture.Admin.CreateTopicAsync();

        using var response = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Post, $"topics/{topic}", token,
            new StringContent("should not be stored", Encoding.UTF8, "text/plain"))).WaitAsync(WireClient.Bound);
        var body = await response.Content.ReadAsStringAsync();

        Assert.True(response.StatusCode == HttpStatusCode.Unauthorized, $"{why}: {(int)response.StatusCode} {body}");
        var challenge = Assert.Single(response.Headers.WwwAuthenticate);
        Assert.Equal("Bearer", challenge.Scheme);
        Assert.Contains("error=\"invalid_token\"", challenge.Parameter);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains(explanation, TestTokens.ParseJson(body).GetProperty("detail").GetString());
        Assert.Equal(0, (await fixture.Admin.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task AGoodTokenIsAcceptedAgainFromTheCache()
    {
        var topic = await fixture.Admin.CreateTopicAsync();
        var token = TestTokens.Grant(PublishAnything);

        for (var i = 1; i <= 3; i++)
        {
            using var response = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Post, $"topics/{topic}", token,
                new StringContent($"m{i}", Encoding.UTF8, "text/plain"))).WaitAsync(WireClient.Bound);
            Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        }

        Assert.Equal(3, (await fixture.Admin.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task ATokenExpiredWithinTheClockSkewIsStillAccepted()
    {
        // Laharsub:Auth:Jwt:ClockSkew is 30 s by default: clocks of issuers and servers differ a little.
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        var token = TestTokens.Hs256(TestTokens.Payload(PublishAnything).With("exp", now - 5));
        var topic = await fixture.Admin.CreateTopicAsync();

        using var response = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Post, $"topics/{topic}", token,
            new StringContent("just in time", Encoding.UTF8, "text/plain"))).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
    }

    [Fact]
    public async Task CredentialsOfAnotherSchemeCountAsNoToken()
    {
        var topic = await fixture.Admin.CreateTopicAsync();
        using var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new StringContent("x") };
        request.Headers.Authorization = new System.Net.Http.Headers.AuthenticationHeaderValue("Basic", "dXNlcjpwYXNz");

        var (status, problem) = await fixture.Anonymous.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.Unauthorized, status);
        Assert.Equal("Token required", problem.GetProperty("title").GetString());
    }
}
