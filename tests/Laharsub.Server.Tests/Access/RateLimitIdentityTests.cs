using System.Net;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Access;

/// <summary>Rate limits count per token subject when a request is authenticated, else per client address (the real one behind a known proxy only).</summary>
public sealed class RateLimitIdentityTests
{
    private const string Publisher = """{"publish":true}""";

    public static TheoryData<string, string[], HttpStatusCode[]> Rows => new()
    {
        // Two publishes allowed per client per hour; each row sends its requests in order, all from 127.0.0.1.
        { "one subject", ["alice", "alice", "alice"], [HttpStatusCode.Created, HttpStatusCode.Created, HttpStatusCode.TooManyRequests] },
        { "two subjects from one address", ["alice", "alice", "bob", "bob", "alice"],
            [HttpStatusCode.Created, HttpStatusCode.Created, HttpStatusCode.Created, HttpStatusCode.Created, HttpStatusCode.TooManyRequests] },
        { "a subject's second token shares its limit", ["alice", "alice#2", "alice"], [HttpStatusCode.Created, HttpStatusCode.Created, HttpStatusCode.TooManyRequests] },
        { "anonymous callers share their address's limit", ["", "", "", "carol"],
            [HttpStatusCode.Created, HttpStatusCode.Created, HttpStatusCode.TooManyRequests, HttpStatusCode.Created] },
    };

    [Theory]
    [MemberData(nameof(Rows))]
    public async Task AuthenticatedRequestsAreLimitedPerSubject(string why, string[] callers, HttpStatusCode[] expected)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings("publish",
            ("Laharsub:RateLimit:RequestsPerPeriod", "2"), ("Laharsub:RateLimit:Period", "01:00:00")));
        var topic = (await server.Store.CreateTopicAsync().AsTask().WaitAsync(WireClient.Bound))!.TopicId;
        using var client = server.CreateClient();

        var statuses = new List<HttpStatusCode>();
        var issued = 0;
        foreach (var caller in callers)
        {
            // "alice#2" is another token (a different iat) for the same subject.
            var subject = caller.Split('#')[0];
            var token = subject.Length == 0 ? null : TestTokens.Hs256(TestTokens.Payload(Publisher, subject).With("jti", $"token-{caller}-{issued++}"));
            using var response = await client.SendAsync(TestTokens.Request(HttpMethod.Post, $"topics/{topic}", token,
                new StringContent("m", Encoding.UTF8, "text/plain"))).WaitAsync(WireClient.Bound);
            statuses.Add(response.StatusCode);
        }

        Assert.True(expected.SequenceEqual(statuses), $"{why}: expected {string.Join(",", expected)}, got {string.Join(",", statuses)}");
    }

    [Theory]
    [InlineData(null, false)]
    [InlineData("127.0.0.1", true)]
    [InlineData("127.0.0.0/8", true)]
    [InlineData("10.0.0.1", false)]
    public async Task XForwardedForCountsOnlyFromAKnownProxy(string? knownProxy, bool believed)
    {
        var settings = new Dictionary<string, string?>
        {
            ["Laharsub:RateLimit:RequestsPerPeriod"] = "1",
            ["Laharsub:RateLimit:Period"] = "01:00:00",
        };
        if (knownProxy is not null)
        {
            settings["Laharsub:ForwardedHeaders:KnownProxies:0"] = knownProxy;
        }
        await using var server = await LaharsubTestServer.StartAsync(settings: settings);
        var topic = (await server.Store.CreateTopicAsync().AsTask().WaitAsync(WireClient.Bound))!.TopicId;
        using var client = server.CreateClient();

        var statuses = new List<HttpStatusCode>();
        foreach (var forwardedFor in new[] { "203.0.113.7", "203.0.113.8" })
        {
            using var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new StringContent("m") };
            request.Headers.Add("X-Forwarded-For", forwardedFor);
            using var response = await client.SendAsync(request).WaitAsync(WireClient.Bound);
            statuses.Add(response.StatusCode);
        }

        // Believed: two clients, one request each. Ignored: one client (the proxy), over its limit.
        Assert.Equal(believed ? HttpStatusCode.Created : HttpStatusCode.TooManyRequests, statuses[1]);
        Assert.Equal(HttpStatusCode.Created, statuses[0]);
    }
}
