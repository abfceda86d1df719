using System.Net;
using Laharsub.Server.Tests.Streams;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Presence;

/// <summary>
/// <c>Laharsub:Presence:MaxMembersPerTopic</c>: a subscription whose identity would be one member too many is
/// refused with a 409 naming the limit (a <c>problem</c> frame on a WebSocket, which goes on without the topic),
/// and nothing of it is stored; members already present keep polling. Before, any number of member ids was
/// taken (20,000 from one client).
/// </summary>
public sealed class PresenceMemberLimitTests
{
    private static async Task<LaharsubTestServer> StartAsync(bool onRedis)
    {
        var settings = new Dictionary<string, string?> { ["Laharsub:Presence:MaxMembersPerTopic"] = "2" };
        if (onRedis)
        {
            settings["Laharsub:Redis:Configuration"] = (await SharedRedis.GetAsync()).Configuration;
            settings["Laharsub:Redis:KeyPrefix"] = SharedRedis.UniquePrefix();
        }
        return await LaharsubTestServer.StartAsync(settings: settings);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task APollThatWouldBeOneMemberTooManyIsRefusedNamingTheLimitAndStoresNothing(bool onRedis)
    {
        await using var server = await StartAsync(onRedis);
        using var client = server.CreateClient();
        var (topic, companion) = await client.CreatePresenceTopicAsync();
        Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={topic}&timeout=0&client=ann")).Status);
        Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={topic}&timeout=0&client=bob")).Status);

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get,
            $"subscriptions?topics={topic}&timeout=0&client=cat&member=%7B%22name%22%3A%22Cat%22%7D"));
        var stream = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&client=dan")
        {
            Headers = { { "Accept", "text/event-stream" } },
        });

        Assert.Equal(HttpStatusCode.Conflict, status);
        Assert.Contains("Laharsub:Presence:MaxMembersPerTopic", problem.GetProperty("detail").GetString());
        Assert.Equal((topic, 2), (problem.GetProperty("topicId").GetInt64(), problem.GetProperty("maxMembersPerTopic").GetInt32()));
        Assert.Equal(HttpStatusCode.Conflict, stream.Status);
        Assert.Equal(topic, stream.Problem.GetProperty("topicId").GetInt64());
        // Present members renew as before; the refused ones were never stored, nor announced.
        Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={topic}&timeout=0&client=ann")).Status);
        var members = await client.MembersAsync(topic);
        Assert.Equal(2, members.Occupancy);
        Assert.Equal(["ann", "bob"], members.Members.Select(member => member.Member));
        var events = await client.PollAsync($"topics={companion}:1&timeout=0");
        Assert.DoesNotContain(events.Messages, message => message.Text.Contains("\"cat\"") || message.Text.Contains("\"dan\""));
    }

    [Fact]
    public async Task ASocketWhoseIdentityATopicHasNoRoomForGetsAProblemAndGoesOnWithoutIt()
    {
        await using var server = await StartAsync(onRedis: false);
        using var client = server.CreateClient();
        var (full, _) = await client.CreatePresenceTopicAsync();
        var (other, _) = await client.CreatePresenceTopicAsync();
        await client.PollAsync($"topics={full}&timeout=0&client=ann");
        await client.PollAsync($"topics={full}&timeout=0&client=bob");

        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={other}&client=cat");
        await socket.ReceiveAsync("subscribed");
        await socket.SendAsync($$"""{"type":"subscribe","id":"s1","topics":"{{full}}"}""");
        var refused = await socket.ReceiveAsync("problem");
        var resubscribed = await socket.ReceiveAsync("subscribed");
        await client.PublishTextAsync(other, "still here");
        var message = await socket.ReceiveAsync("message");

        Assert.Equal("s1", refused.GetProperty("id").GetString());
        Assert.Equal((409, full), (refused.GetProperty("problem").GetProperty("status").GetInt32(), refused.GetProperty("problem").GetProperty("topicId").GetInt64()));
        Assert.Equal([other], resubscribed.GetProperty("topics").EnumerateArray().Select(topic => topic.GetProperty("topicId").GetInt64()));
        Assert.Equal("still here", message.GetProperty("message").Text());
        Assert.Equal(["ann", "bob"], (await client.MembersAsync(full)).Members.Select(member => member.Member));
    }
}
