using System.Net;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>AccessTokenProvider: a token on every request, one refresh after a 401, and a 403 that is never retried.</summary>
public sealed class AccessTokenTests
{
    private const string Everything = """{"create":true,"publish":true,"subscribe":true,"list":true,"delete":true}""";

    /// <summary>Tokens the provider hands out in turn; the last one repeats.</summary>
    private sealed class TokenSequence(params string?[] tokens)
    {
        private int _calls;

        public int Calls => Volatile.Read(ref _calls);

        public ValueTask<string?> NextAsync(CancellationToken cancellationToken)
        {
            var call = Interlocked.Increment(ref _calls);
            return ValueTask.FromResult(tokens[Math.Min(call, tokens.Length) - 1]);
        }
    }

    private static string Expired(string claim)
    {
        var now = DateTimeOffset.UtcNow.ToUnixTimeSeconds();
        return TestTokens.Hs256(TestTokens.Payload(claim).With("exp", now - 3600).With("nbf", now - 7200));
    }

    public static TheoryData<string, string?[], int, int, HttpStatusCode?> Publishes => new()
    {
        // why, tokens the provider returns in turn, provider calls, requests sent, error (null: published)
        { "a good token", [TestTokens.Grant(Everything)], 1, 1, null },
        { "an expired token is refreshed once", [Expired(Everything), TestTokens.Grant(Everything)], 2, 2, null },
        { "a refresh that is still bad ends with 401", [Expired(Everything), Expired(Everything), TestTokens.Grant(Everything)], 2, 2, HttpStatusCode.Unauthorized },
        { "no token at all", [null], 2, 2, HttpStatusCode.Unauthorized },
        { "a token without the permission is not retried", [TestTokens.Grant("""{"subscribe":true}"""), TestTokens.Grant(Everything)], 1, 1, HttpStatusCode.Forbidden },
    };

    [Theory]
    [MemberData(nameof(Publishes))]
    public async Task APublishCarriesTheTokenAndRefreshesItOnceAfterA401(string why, string?[] tokens, int calls, int requests, HttpStatusCode? error)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        var topic = await CreateTopicAsync(server);
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        var provider = new TokenSequence(tokens);
        var options = TestSupport.Options();
        options.AccessTokenProvider = provider.NextAsync;
        await using var client = new LaharsubClient(http, options);

        var publish = client.PublishAsync(topic, "hello").WaitAsync(TestSupport.Timeout);

        if (error is null)
        {
            await publish;
        }
        else
        {
            var refused = await Assert.ThrowsAnyAsync<LaharsubException>(() => publish);
            Assert.Equal(error, refused.StatusCode);
            if (error == HttpStatusCode.Forbidden)
            {
                var denied = Assert.IsType<LaharsubAccessDeniedException>(refused);
                Assert.Equal(topic, denied.TopicId);
                Assert.Equal("publish", denied.Operation);
            }
        }
        Assert.True(calls == provider.Calls && requests == handler.Requests, $"{why}: {provider.Calls} provider calls, {handler.Requests} requests");
    }

    [Fact]
    public async Task ASubscriptionRefreshesAnExpiredTokenAndGoesOn()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        var topic = await CreateTopicAsync(server);
        var provider = new TokenSequence(Expired(Everything), TestTokens.Grant(Everything));
        var options = TestSupport.Options();
        options.AccessTokenProvider = provider.NextAsync;
        await using var client = new LaharsubClient(server.ApiAddress, options);
        await client.PublishAsync(topic, "retained").WaitAsync(TestSupport.Timeout);

        await using var reader = new EventReader(client.Subscribe());
        reader.Subscription.Add(topic, from: 1);
        var first = await reader.NextAsync();

        Assert.Equal("retained", first.Text());
        Assert.True(provider.Calls >= 3, $"the provider was called {provider.Calls} times: once per request, once more after the 401");
    }

    [Fact]
    public async Task ASubscriptionToAForbiddenTopicEndsNamingItWithoutRetrying()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        var allowed = await CreateTopicAsync(server);
        var forbidden = await CreateTopicAsync(server);
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        var options = TestSupport.Options();
        options.AccessTokenProvider = _ => ValueTask.FromResult<string?>(TestTokens.Grant($$"""{"subscribe":["{{allowed}}"]}"""));
        await using var client = new LaharsubClient(http, options);

        await using var reader = new EventReader(client.Subscribe());
        reader.Subscription.Add(allowed, from: 1);
        reader.Subscription.Add(forbidden, from: 1);
        var denied = await Assert.ThrowsAsync<LaharsubAccessDeniedException>(() => reader.PendingStep.WaitAsync(TestSupport.Timeout));

        Assert.Equal(forbidden, denied.TopicId);
        Assert.Equal("subscribe", denied.Operation);
        Assert.Equal(1, handler.Requests);
    }

    private static async Task<long> CreateTopicAsync(LaharsubTestServer server)
    {
        var options = TestSupport.Options();
        options.AccessTokenProvider = _ => ValueTask.FromResult<string?>(TestTokens.Grant(Everything, "admin"));
        await using var admin = new LaharsubClient(server.ApiAddress, options);
        return await admin.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
    }
}
