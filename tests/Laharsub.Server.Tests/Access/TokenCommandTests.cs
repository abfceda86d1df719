using System.Net;
using System.Text.Json;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Access;

/// <summary>
/// The standalone server's <c>token</c> command, run as operators run it (the built executable): what it
/// grants, whatever the order of its options and of configuration arguments, and that the README's
/// "Lock it down" steps work with what it prints.
/// </summary>
public sealed class TokenCommandTests
{
    private static readonly string[] Configuration =
        [$"--Laharsub:Auth:Jwt:SigningKey={TestTokens.Key}", $"--Laharsub:Auth:Jwt:Issuer={TestTokens.Issuer}", $"--Laharsub:Auth:Jwt:Audience={TestTokens.Audience}"];

    public static TheoryData<string, string[], string> Grants => new()
    {
        // why, arguments after "token" (CONFIG: the key, issuer and audience as --Laharsub:...= arguments), the laharsub claim printed
        { "configuration after a grant with several values", ["--publish", "14", "15", "CONFIG"], """{"publish":["14","15"]}""" },
        { "configuration after a repeated grant", ["--publish", "14", "--publish", "15", "CONFIG"], """{"publish":["14","15"]}""" },
        { "configuration first", ["CONFIG", "--subscribe", "orders-*,42", "--create", "orders-*"], """{"create":["orders-*"],"subscribe":["orders-*","42"]}""" },
        { "configuration between grants", ["--subscribe", "*", "CONFIG", "--list", "news-*"], """{"subscribe":["*"],"list":["news-*"]}""" },
        { "every operation, admin included", ["--all", "CONFIG"], """{"create":["*"],"publish":["*"],"subscribe":["*"],"list":["*"],"delete":["*"],"presence":["*"],"admin":["*"]}""" },
        { "an operator of the admin page", ["--admin", "*", "--list", "*", "CONFIG"], """{"list":["*"],"admin":["*"]}""" },
    };

    [Theory]
    [MemberData(nameof(Grants))]
    public async Task TheTokenGrantsWhatTheOptionsSayWhereverConfigurationArgumentsStand(string why, string[] arguments, string claim)
    {
        var run = await HostProcess.RunCommandAsync(["token", .. arguments.SelectMany(a => a == "CONFIG" ? Configuration : [a])]);

        Assert.True(run.ExitCode == 0, $"{why}: exit code {run.ExitCode}: {run.Error}");
        var payload = Payload(run.Output.Trim());
        Assert.Equal(JsonSerializer.Serialize(JsonDocument.Parse(claim)), JsonSerializer.Serialize(payload.GetProperty("laharsub")));
        Assert.Equal(TestTokens.Issuer, payload.GetProperty("iss").GetString());
        Assert.Equal(TestTokens.Audience, payload.GetProperty("aud").GetString());
    }

    public static TheoryData<string[], string> Refusals => new()
    {
        { ["--create", "14", "CONFIG"], "--create 14: creation is granted by label pattern" },
        { ["--admin", "orders-*", "CONFIG"], "--admin orders-*: admin is no topic permission" },
        { ["--publish", "*", "--ttl", "1w", "CONFIG"], "--ttl 1w is not a lifetime" },
        { ["--publish", "orders eu", "CONFIG"], "--publish orders eu" },
        { ["--publish", "*"], "Laharsub:Auth:Jwt:SigningKey, which is not set" },
        { ["CONFIG"], "The token would grant nothing" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task ATokenThatCannotBeIssuedIsRefusedSayingWhy(string[] arguments, string message)
    {
        var run = await HostProcess.RunCommandAsync(["token", .. arguments.SelectMany(a => a == "CONFIG" ? Configuration : [a])]);

        Assert.Equal(2, run.ExitCode);
        Assert.Equal("", run.Output);
        Assert.Contains(message, run.Error);
    }

    [Fact]
    public async Task TheReadmesLockItDownStepsWork()
    {
        // As in README.md, "Lock it down": the settings in the environment, read by the server and the command alike.
        var key = Convert.ToBase64String(System.Security.Cryptography.RandomNumberGenerator.GetBytes(32));
        var environment = new Dictionary<string, string?>
        {
            ["Laharsub__Auth__Mode"] = "Jwt",
            ["Laharsub__Auth__Jwt__SigningKey"] = key,
            ["Laharsub__Auth__Jwt__Issuer"] = "my-app",
            ["Laharsub__Auth__Jwt__Audience"] = "laharsub",
            ["Laharsub__Auth__Anonymous"] = "subscribe,list",
        };
        var run = await HostProcess.RunCommandAsync(["token", "--create", "*", "--publish", "*", "--subscribe", "*", "--ttl", "1h"], environment);
        Assert.True(run.ExitCode == 0, run.Error);
        Assert.Equal("", run.Error);
        var token = run.Output.Trim();
        Assert.StartsWith("eyJ", token);
        await using var server = await LaharsubTestServer.StartAsync(settings: environment.ToDictionary(e => e.Key.Replace("__", ":"), e => e.Value));
        using var client = server.CreateClient();

        using var anonymousCreate = await client.PostAsync("topics", null).WaitAsync(WireClient.Bound);
        using var create = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", token,
            new StringContent("""{"label":"orders-eu"}""", Encoding.UTF8, "application/json"))).WaitAsync(WireClient.Bound);
        var topic = TestTokens.ParseJson(await create.Content.ReadAsStringAsync()).GetProperty("topicId").GetInt64();
        using var publish = await client.SendAsync(TestTokens.Request(HttpMethod.Post, $"topics/{topic}", token, new StringContent("hello"))).WaitAsync(WireClient.Bound);
        var poll = await client.PollAsync($"topics={topic}:1&timeout=0");
        using var delete = await client.SendAsync(TestTokens.Request(HttpMethod.Delete, $"topics/{topic}", token)).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Unauthorized, anonymousCreate.StatusCode);
        Assert.Equal("Bearer", Assert.Single(anonymousCreate.Headers.WwwAuthenticate).Scheme);
        Assert.Equal(HttpStatusCode.Created, create.StatusCode);
        Assert.Equal(HttpStatusCode.Created, publish.StatusCode);
        Assert.Equal(["hello"], poll.Messages.Select(m => m.Text));
        Assert.Equal(HttpStatusCode.Forbidden, delete.StatusCode);
        var lifetime = Payload(token);
        Assert.Equal(3600, lifetime.GetProperty("exp").GetInt64() - lifetime.GetProperty("iat").GetInt64());
    }

    private static JsonElement Payload(string token)
    {
        var parts = token.Split('.');
        Assert.True(parts.Length == 3, $"not a JWT: '{token}'");
        var base64 = parts[1].Replace('-', '+').Replace('_', '/');
        base64 = base64.PadRight(base64.Length + ((4 - (base64.Length % 4)) % 4), '=');
        return TestTokens.ParseJson(Encoding.UTF8.GetString(Convert.FromBase64String(base64)));
    }
}
