using System.Net;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Presence;

/// <summary>Presence in Jwt mode: the token's subject is the member, and members' data needs the <c>presence</c> permission.</summary>
public sealed class PresenceAccessTests
{
    [Fact]
    public async Task TheSubjectIsTheMemberAndOnlyAPresenceGrantSeesMembersSubscribeSeesTheOccupancy()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        using var client = server.CreateClient();
        var subscriber = TestTokens.Grant("""{"create":true,"subscribe":true}""", subject: "alice");
        var watcher = TestTokens.Grant("""{"subscribe":true,"presence":true}""", subject: "bob");
        using var created = await client.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", subscriber,
            new StringContent("""{"presence":true}""", Encoding.UTF8, "application/json"))).WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        var topic = JsonDocument.Parse(await created.Content.ReadAsStringAsync()).RootElement.GetProperty("topicId").GetInt64();

        var member = Uri.EscapeDataString("""{"name":"Alice"}""");
        using var poll = await client.SendAsync(TestTokens.Request(HttpMethod.Get, $"subscriptions?topics={topic}&timeout=0&member={member}", subscriber))
            .WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.NoContent, poll.StatusCode);

        var full = await ReadAsync(client, topic, watcher);
        Assert.Equal(1, full.GetProperty("occupancy").GetInt32());
        var alice = Assert.Single(full.GetProperty("members").EnumerateArray());
        Assert.Equal(("alice", "Alice"), (alice.GetProperty("member").GetString(), alice.GetProperty("data").GetProperty("name").GetString()));

        var occupancyOnly = await ReadAsync(client, topic, subscriber);
        Assert.Equal(1, occupancyOnly.GetProperty("occupancy").GetInt32());
        Assert.False(occupancyOnly.TryGetProperty("members", out _));

        var (status, problem) = await client.SendForProblemAsync(TestTokens.Request(HttpMethod.Get, $"subscriptions?topics={topic}&timeout=0&client=mallory", subscriber));
        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty("client", out _), problem.ToString());
        var (forbidden, _) = await client.SendForProblemAsync(TestTokens.Request(HttpMethod.Get, $"topics/{topic}/presence", TestTokens.Grant("""{"publish":true}""")));
        Assert.Equal(HttpStatusCode.Forbidden, forbidden);
    }

    private static async Task<JsonElement> ReadAsync(HttpClient client, long topic, string token)
    {
        using var response = await client.SendAsync(TestTokens.Request(HttpMethod.Get, $"topics/{topic}/presence", token)).WaitAsync(WireClient.Bound);
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, text);
        return JsonDocument.Parse(text).RootElement.Clone();
    }
}
