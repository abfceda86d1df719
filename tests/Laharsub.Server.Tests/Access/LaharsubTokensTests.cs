using System.Net;
using Laharsub.Server.Access;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Access;

/// <summary>
/// An application mints its users' tokens with <see cref="LaharsubTokens"/> (registered by AddLaharsub): the server
/// accepts them with exactly the grants given, and a bad grant or lifetime is refused naming what to fix.
/// </summary>
public sealed class LaharsubTokensTests
{
    [Fact]
    public async Task AMintedTokenGrantsExactlyWhatItWasGiven()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings()).WaitAsync(WireClient.Bound);
        var tokens = server.Services.GetRequiredService<LaharsubTokens>();
        using var client = server.CreateClient();
        client.DefaultRequestHeaders.Authorization = new("Bearer", tokens.Issue("ann",
            new Dictionary<LaharsubOperation, string[]> { [LaharsubOperation.Create] = ["ann-*"], [LaharsubOperation.Publish] = ["ann-*"], [LaharsubOperation.Subscribe] = ["ann-*"] },
            TimeSpan.FromMinutes(15)));

        using var mine = await client.PostAsync("topics", new StringContent("""{"label":"ann-orders"}""", System.Text.Encoding.UTF8, "application/json")).WaitAsync(WireClient.Bound);
        using var theirs = await client.PostAsync("topics", new StringContent("""{"label":"bob-orders"}""", System.Text.Encoding.UTF8, "application/json")).WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.Created, mine.StatusCode);
        Assert.Equal(HttpStatusCode.Forbidden, theirs.StatusCode);
        var topic = TestTokens.ParseJson(await mine.Content.ReadAsStringAsync()).GetProperty("topicId").GetInt64();
        await client.PublishTextAsync(topic, "minted");
        Assert.Equal("minted", (await client.PollAsync($"topics={topic}:1&timeout=0")).Messages.Single().Text);
        using var listing = await client.GetAsync("topics").WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.Forbidden, listing.StatusCode);
    }

    [Theory]
    [InlineData("ann", LaharsubOperation.Subscribe, "[bad", 15, "grants[Subscribe] [bad")]
    [InlineData("ann", LaharsubOperation.Create, "14", 15, "grants[Create] 14: creation is granted by label pattern")]
    [InlineData("", LaharsubOperation.Subscribe, "*", 15, "subject is empty")]
    [InlineData("ann", LaharsubOperation.Subscribe, "*", 0, "lifetime is 00:00:00")]
    public async Task ABadGrantSubjectOrLifetimeIsRefusedNamingIt(string subject, LaharsubOperation operation, string pattern, int minutes, string expected)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings()).WaitAsync(WireClient.Bound);
        var tokens = server.Services.GetRequiredService<LaharsubTokens>();

        var failure = Assert.Throws<ArgumentException>(() => tokens.Issue(subject, new Dictionary<LaharsubOperation, string[]> { [operation] = [pattern] }, TimeSpan.FromMinutes(minutes)));

        Assert.Contains(expected, failure.Message, StringComparison.Ordinal);
    }
}
