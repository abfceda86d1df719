using Laharsub.Server;
using System.Text;
using BenchmarkDotNet.Attributes;
using Laharsub.Server.Access;
using Laharsub.Server.Hosting;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.JwtBearer;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

namespace Laharsub.Benchmarks;

/// <summary>
/// What Jwt mode adds to each request: authenticating its bearer token through the real JwtBearer
/// handler with the token already in Laharsub's per-token cache (every request after a client's first),
/// against validating it from scratch (signature, lifetime, issuer, audience, the laharsub claim).
/// </summary>
[MemoryDiagnoser]
public class AccessTokenBenchmarks
{
    private const string Key = "benchmark-signing-key-0123456789abcdef";

    private ServiceProvider _services = null!;
    private string _token = null!;
    private TokenValidationParameters _parameters = null!;
    private JsonWebTokenHandler _handler = null!;

    [GlobalSetup]
    public void Setup()
    {
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(new Dictionary<string, string?>
        {
            ["Laharsub:Auth:Mode"] = "Jwt",
            ["Laharsub:Auth:Jwt:SigningKey"] = Key,
            ["Laharsub:Auth:Jwt:Issuer"] = "bench",
            ["Laharsub:Auth:Jwt:Audience"] = "laharsub",
        }).Build();
        var services = new ServiceCollection();
        services.AddSingleton<IConfiguration>(configuration);
        services.AddLogging();
        services.AddLaharsub();
        _services = services.BuildServiceProvider();
        var auth = _services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value;
        _token = TokenIssuer.Issue(auth, "bench-user",
            new Dictionary<LaharsubOperation, IReadOnlyList<string>> { [LaharsubOperation.Subscribe] = ["orders-*", "14", "100-199"] },
            TimeSpan.FromHours(1), DateTimeOffset.UtcNow, TokenIssuer.CommandLine);
        _parameters = _services.GetRequiredService<IOptionsMonitor<JwtBearerOptions>>().Get(LaharsubAccess.SchemeName).TokenValidationParameters;
        _handler = new JsonWebTokenHandler { MapInboundClaims = false };
        // Warm the cache as a client's first request does.
        if (!AuthenticateCached().Succeeded)
        {
            throw new InvalidOperationException("The benchmark token was refused.");
        }
    }

    [GlobalCleanup]
    public void Cleanup() => _services.Dispose();

    /// <summary>One request's authentication, answered from the per-token cache.</summary>
    [Benchmark(Baseline = true)]
    public AuthenticateResult AuthenticateCached()
    {
        using var scope = _services.CreateScope();
        var context = new DefaultHttpContext { RequestServices = scope.ServiceProvider };
        context.Request.Headers.Authorization = "Bearer " + _token;
        return context.AuthenticateAsync(LaharsubAccess.SchemeName).GetAwaiter().GetResult();
    }

    /// <summary>What the cache saves: HS256 signature, lifetime, issuer and audience checks, and parsing the claim.</summary>
    [Benchmark]
    public bool ValidateUncached()
    {
        var result = _handler.ValidateTokenAsync(_token, _parameters).GetAwaiter().GetResult();
        return result.IsValid
            && LaharsubPermissions.TryParseClaim(result.ClaimsIdentity.FindFirst(LaharsubPermissions.ClaimType)!.Value, out _, out _);
    }
}
