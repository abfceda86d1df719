using System.Collections.Concurrent;
using System.Net;
using System.Security.Cryptography;
using System.Text;
using Laharsub.Server.Access;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Tests.Access;

/// <summary>Settings refused at start, the keys and modes that work, and what Open mode leaves out.</summary>
public sealed class AccessConfigurationTests
{
    public static TheoryData<string, (string, string?)[], string> BadSettings => new()
    {
        { "short key", [("Laharsub:Auth:Jwt:SigningKey", "too-short")], "Laharsub:Auth:Jwt:SigningKey is 9 bytes" },
        { "alg none", [("Laharsub:Auth:Jwt:Algorithms:0", "none")], "Laharsub:Auth:Jwt:Algorithms contains 'none'" },
        { "unknown alg", [("Laharsub:Auth:Jwt:Algorithms:0", "HS1")], "Laharsub:Auth:Jwt:Algorithms contains 'HS1'" },
        { "no audience", [("Laharsub:Auth:Jwt:Audience", "")], "Laharsub:Auth:Jwt:Audience is not set" },
        { "no issuer", [("Laharsub:Auth:Jwt:Issuer", "")], "Laharsub:Auth:Jwt:Issuer is not set" },
        { "no key", [("Laharsub:Auth:Jwt:SigningKey", "")], "no key is configured" },
        { "bad anonymous", [("Laharsub:Auth:Anonymous", "read")], "Laharsub:Auth:Anonymous contains 'read'" },
        { "bad public key", [("Laharsub:Auth:Jwt:PublicKeys:0", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----")], "Laharsub:Auth:Jwt:PublicKeys:0" },
        { "small RSA key", [("Laharsub:Auth:Jwt:PublicKeys:0", RSA.Create(1024).ExportSubjectPublicKeyInfoPem())], "at least 2048" },
        { "http authority", [("Laharsub:Auth:Jwt:Authority", "http://login.example.com")], "Laharsub:Auth:Jwt:Authority" },
        { "bad proxy", [("Laharsub:ForwardedHeaders:KnownProxies:0", "proxy.example.com")], "Laharsub:ForwardedHeaders:KnownProxies" },
    };

    [Theory]
    [MemberData(nameof(BadSettings))]
    public async Task AWeakOrIncompleteSettingStopsTheServerAtStartNamingIt(string why, (string, string?)[] settings, string message)
    {
        var failure = await Assert.ThrowsAsync<OptionsValidationException>(() => LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(null, settings)));

        Assert.True(failure.Message.Contains(message), $"{why}: {failure.Message}");
    }

    [Fact]
    public async Task Rs256AndEs256TokensAreCheckedWithConfiguredPublicKeys()
    {
        using var rsa = RSA.Create(2048);
        using var ecdsa = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var otherEcdsa = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(null,
            ("Laharsub:Auth:Jwt:SigningKey", null),
            ("Laharsub:Auth:Jwt:PublicKeys:0", rsa.ExportSubjectPublicKeyInfoPem()),
            ("Laharsub:Auth:Jwt:PublicKeys:1", ecdsa.ExportSubjectPublicKeyInfoPem())));
        using var client = server.CreateClient();
        var create = TestTokens.Payload("""{"create":true}""");

        using var byRsa = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", TestTokens.Rs256(create, rsa))).WaitAsync(WireClient.Bound);
        using var byEcdsa = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", TestTokens.Es256(create, ecdsa))).WaitAsync(WireClient.Bound);
        using var byStranger = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", TestTokens.Es256(create, otherEcdsa))).WaitAsync(WireClient.Bound);
        using var byHmac = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", TestTokens.Hs256(create))).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Created, byRsa.StatusCode);
        Assert.Equal(HttpStatusCode.Created, byEcdsa.StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, byStranger.StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, byHmac.StatusCode);
    }

    [Fact]
    public async Task TokensAreCheckedWithTheKeysAnAuthorityPublishes()
    {
        // A local OpenID Connect issuer: its discovery document and JWKS, on loopback.
        using var rsa = RSA.Create(2048);
        var parameters = rsa.ExportParameters(false);
        var builder = Microsoft.AspNetCore.Builder.WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        await using var issuer = builder.Build();
        string? authority = null;
        issuer.MapGet("/realm/.well-known/openid-configuration", () => Microsoft.AspNetCore.Http.Results.Text(
            $$"""{"issuer":"{{authority}}","jwks_uri":"{{authority}}/jwks"}""", "application/json"));
        issuer.MapGet("/realm/jwks", () => Microsoft.AspNetCore.Http.Results.Text(
            $$"""{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"k1","n":"{{TestTokens.Base64Url(parameters.Modulus!)}}","e":"{{TestTokens.Base64Url(parameters.Exponent!)}}"}]}""",
            "application/json"));
        await issuer.StartAsync().WaitAsync(WireClient.Bound);
        authority = issuer.Urls.First() + "/realm";
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(null,
            ("Laharsub:Auth:Jwt:SigningKey", null), ("Laharsub:Auth:Jwt:Issuer", null),
            ("Laharsub:Auth:Jwt:Authority", authority), ("Laharsub:Auth:Jwt:RequireHttpsMetadata", "false")));
        using var client = server.CreateClient();
        var create = TestTokens.Payload("""{"create":true}""").With("iss", authority);

        using var signedByAuthority = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", TestTokens.Rs256(create, rsa))).WaitAsync(WireClient.Bound);
        using var otherIssuer = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics",
            TestTokens.Rs256(TestTokens.Payload("""{"create":true}"""), rsa))).WaitAsync(WireClient.Bound);
        using var otherKey = RSA.Create(2048);
        using var signedByStranger = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", TestTokens.Rs256(create, otherKey))).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Created, signedByAuthority.StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, otherIssuer.StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, signedByStranger.StatusCode);
        await issuer.StopAsync().WaitAsync(WireClient.Bound);
    }

    [Fact]
    public async Task OpenModeAddsNoFilterAndNoAuthenticationAndWarnsOnce()
    {
        var logs = new LogRecorder();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<ILoggerProvider>(logs));
        using var client = server.CreateClient();
        using var admin = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        // A token is ignored, good or bad: Open mode does not look at it.
        using var request = TestTokens.Request(HttpMethod.Post, $"topics/{topic}", "garbage", new StringContent("still open"));
        using var response = await client.SendAsync(request).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        var endpoints = server.Services.GetRequiredService<EndpointDataSource>().Endpoints;
        Assert.All(endpoints, endpoint => Assert.Empty(endpoint.Metadata.OfType<AccessRule>()));
        var schemes = await server.Services.GetRequiredService<Microsoft.AspNetCore.Authentication.IAuthenticationSchemeProvider>().GetAllSchemesAsync();
        Assert.Empty(schemes);
        var warning = Assert.Single(logs.Warnings, w => w.Contains("Laharsub:Auth:Mode is Open"));
        Assert.Contains("Laharsub:Auth:Mode=Jwt", warning);
    }

    [Fact]
    public async Task InOpenModeNoRequestPassesTheAuthenticationMiddleware()
    {
        // ASP.NET Core adds the authentication middleware by itself when authentication services are
        // registered; it would open a DI scope for every request, held by a waiting poll for its whole wait.
        await using var open = await LaharsubTestServer.StartAsync(services: CountRequestsAuthenticated);
        var schemes = (CountingSchemeProvider)open.Services.GetRequiredService<Microsoft.AspNetCore.Authentication.IAuthenticationSchemeProvider>();
        using var client = open.CreateClient();
        var topic = await client.CreateTopicAsync();

        await client.PublishTextAsync(topic, "open");
        var poll = await client.PollAsync($"topics={topic}:1&timeout=0");

        Assert.Equal(["open"], poll.Messages.Select(m => m.Text));
        Assert.Equal(0, schemes.RequestsAuthenticated);
    }

    [Fact]
    public async Task InJwtModeTheAuthenticationMiddlewareRunsSoThatRateLimitsSeeTheSubject()
    {
        await using var jwt = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(), services: CountRequestsAuthenticated);
        var schemes = (CountingSchemeProvider)jwt.Services.GetRequiredService<Microsoft.AspNetCore.Authentication.IAuthenticationSchemeProvider>();
        using var client = jwt.CreateClient();
        client.DefaultRequestHeaders.Authorization = new("Bearer", TestTokens.Grant(JwtServerFixture.Everything));

        await client.CreateTopicAsync();

        Assert.True(schemes.RequestsAuthenticated > 0);
    }

    /// <summary>Counts the requests the authentication middleware sees (it asks for the request handler schemes once per request).</summary>
    private static void CountRequestsAuthenticated(IServiceCollection services) =>
        services.AddSingleton<Microsoft.AspNetCore.Authentication.IAuthenticationSchemeProvider, CountingSchemeProvider>();

    private sealed class CountingSchemeProvider(IOptions<Microsoft.AspNetCore.Authentication.AuthenticationOptions> options)
        : Microsoft.AspNetCore.Authentication.AuthenticationSchemeProvider(options)
    {
        private int _requests;

        public int RequestsAuthenticated => Volatile.Read(ref _requests);

        public override Task<IEnumerable<Microsoft.AspNetCore.Authentication.AuthenticationScheme>> GetRequestHandlerSchemesAsync()
        {
            Interlocked.Increment(ref _requests);
            return base.GetRequestHandlerSchemesAsync();
        }
    }

    [Fact]
    public async Task InJwtModeEveryLaharsubEndpointHasAnAccessRule()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());

        var laharsub = server.Services.GetRequiredService<EndpointDataSource>().Endpoints
            .OfType<RouteEndpoint>().Where(e => e.RoutePattern.RawText?.StartsWith("/ps") == true).ToList();

        Assert.NotEmpty(laharsub);
        Assert.All(laharsub, endpoint =>
        {
            var rule = Assert.Single(endpoint.Metadata.OfType<AccessRule>());
            Assert.True(rule != AccessRule.Unclassified, $"{endpoint.DisplayName} has no access rule");
        });
    }

    [Fact]
    public async Task HealthAndMetricsSayWhichModeIsOn()
    {
        await using var open = await LaharsubTestServer.StartAsync();
        await using var jwt = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings("subscribe"));
        using var openClient = new HttpClient { BaseAddress = open.BaseAddress, Timeout = WireClient.Bound };
        using var jwtClient = new HttpClient { BaseAddress = jwt.BaseAddress, Timeout = WireClient.Bound };

        var openHealth = TestTokens.ParseJson(await openClient.GetStringAsync("health").WaitAsync(WireClient.Bound));
        var jwtHealth = TestTokens.ParseJson(await jwtClient.GetStringAsync("health").WaitAsync(WireClient.Bound));

        Assert.Equal("Open", openHealth.GetProperty("checks").GetProperty("laharsub-access").GetProperty("data").GetProperty("mode").GetString());
        Assert.Equal("Jwt", jwtHealth.GetProperty("checks").GetProperty("laharsub-access").GetProperty("data").GetProperty("mode").GetString());
        Assert.Equal("Healthy", jwtHealth.GetProperty("status").GetString());
        Assert.Equal(0, ObserveGauge(open, "laharsub.auth.jwt"));
        Assert.Equal(1, ObserveGauge(jwt, "laharsub.auth.jwt"));
    }

    [Fact]
    public async Task CrossOriginPagesMayPreflightWithoutATokenAndReadWwwAuthenticate()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        using var client = server.CreateClient();
        using var preflight = new HttpRequestMessage(HttpMethod.Options, "topics/1");
        preflight.Headers.Add("Origin", "https://chat.example.com");
        preflight.Headers.Add("Access-Control-Request-Method", "POST");
        preflight.Headers.Add("Access-Control-Request-Headers", "authorization,content-type");
        using var refused = new HttpRequestMessage(HttpMethod.Post, "topics/1") { Content = new StringContent("x") };
        refused.Headers.Add("Origin", "https://chat.example.com");

        using var preflightAnswer = await client.SendAsync(preflight).WaitAsync(WireClient.Bound);
        using var refusedAnswer = await client.SendAsync(refused).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.NoContent, preflightAnswer.StatusCode);
        Assert.Contains("authorization", preflightAnswer.Headers.GetValues("Access-Control-Allow-Headers").Single(), StringComparison.OrdinalIgnoreCase);
        Assert.Equal(HttpStatusCode.Unauthorized, refusedAnswer.StatusCode);
        Assert.Contains("WWW-Authenticate", refusedAnswer.Headers.GetValues("Access-Control-Expose-Headers").Single());
        Assert.False(refusedAnswer.Headers.Contains("Access-Control-Allow-Credentials"));
    }

    [Fact]
    public async Task TheDevelopmentTokenIsAcceptedByTheServerItWasIssuedFor()
    {
        var settings = TestTokens.JwtSettings();
        await using var server = await LaharsubTestServer.StartAsync(settings: settings);
        var auth = server.Services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value;
        var token = TokenIssuer.Issue(auth, "tool-user",
            new Dictionary<LaharsubOperation, IReadOnlyList<string>> { [LaharsubOperation.Create] = ["*"], [LaharsubOperation.Publish] = ["*"] },
            TimeSpan.FromHours(1), DateTimeOffset.UtcNow, TokenIssuer.CommandLine);
        using var client = server.CreateClient();
        client.DefaultRequestHeaders.Authorization = new("Bearer", token);

        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "issued by the token tool");
        using var poll = await client.GetAsync($"subscriptions?topics={topic}:1&timeout=0").WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Forbidden, poll.StatusCode);
    }

    public static TheoryData<string, bool, double> Lifetimes => new()
    {
        { "90s", true, 90 }, { "30m", true, 1800 }, { "1h", true, 3600 }, { "7d", true, 604800 }, { "01:30:00", true, 5400 },
        { "1w", false, 0 }, { "soon", false, 0 },
    };

    [Theory]
    [MemberData(nameof(Lifetimes))]
    public void TheTokenToolReadsLifetimes(string text, bool valid, double seconds)
    {
        Assert.Equal(valid, TokenIssuer.TryParseTimeToLive(text, out var lifetime));
        if (valid)
        {
            Assert.Equal(TimeSpan.FromSeconds(seconds), lifetime);
        }
    }

    [Fact]
    public void TheTokenToolRefusesToSignWithoutAKey()
    {
        var failure = Assert.Throws<ArgumentException>(() => TokenIssuer.Issue(new LaharsubAuthOptions(), "me",
            new Dictionary<LaharsubOperation, IReadOnlyList<string>> { [LaharsubOperation.Publish] = ["*"] }, TimeSpan.FromHours(1), DateTimeOffset.UtcNow, TokenIssuer.CommandLine));

        Assert.Contains("Laharsub:Auth:Jwt:SigningKey", failure.Message);
    }

    private static long ObserveGauge(LaharsubTestServer server, string name)
    {
        var factory = server.Services.GetRequiredService<System.Diagnostics.Metrics.IMeterFactory>();
        long? value = null;
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Name == name && instrument.Meter.Scope == factory)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<int>((_, measurement, _, _) => value = measurement);
        listener.Start();
        listener.RecordObservableInstruments();
        return value ?? -1;
    }

    private sealed class LogRecorder : ILoggerProvider, ILogger
    {
        public ConcurrentQueue<string> Warnings { get; } = new();

        public ILogger CreateLogger(string categoryName) => this;

        public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Warning;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (IsEnabled(logLevel))
            {
                Warnings.Enqueue(formatter(state, exception));
            }
        }

        public void Dispose()
        {
        }
    }
}
