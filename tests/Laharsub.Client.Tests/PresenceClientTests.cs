using System.Net;
using System.Text;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// Presence through the .NET client against the real server (docs/protocol.md, "Presence"): topics
/// created with it, identities and member data on every transport, the member list, join and leave events.
/// </summary>
public sealed class PresenceClientTests
{
    /// <summary>Short, so that a leave comes about a second after its subscription ends.</summary>
    private static readonly Dictionary<string, string?> ShortGrace = new()
    {
        ["Laharsub:Presence:GracePeriod"] = "00:00:01",
        ["Laharsub:Presence:SweepInterval"] = "00:00:00.100",
    };

    public static TheoryData<LaharsubTransport> Transports =>
        [LaharsubTransport.LongPolling, LaharsubTransport.ServerSentEvents, LaharsubTransport.WebSocket];

    [Fact]
    public async Task ATopicCreatedWithPresenceNamesItsCompanionTopicAndTheCompanionNamesIt()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();

        var room = await client.CreateTopicWithPresenceAsync("room-1").WaitAsync(TestSupport.Timeout);
        var plain = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        var info = await client.GetTopicAsync(room.TopicId).WaitAsync(TestSupport.Timeout);
        var companion = await client.GetTopicAsync(room.PresenceTopicId!.Value).WaitAsync(TestSupport.Timeout);
        var plainInfo = await client.GetTopicAsync(plain.TopicId).WaitAsync(TestSupport.Timeout);

        Assert.True(room.Presence);
        Assert.Equal("room-1", room.Label);
        Assert.True(info.Presence);
        Assert.Equal(room.PresenceTopicId, info.PresenceTopicId);
        Assert.Equal(room.TopicId, companion.PresenceOf);
        Assert.False(plain.Presence);
        Assert.Null(plain.PresenceTopicId);
        Assert.False(plainInfo.Presence);
        Assert.Null(plainInfo.PresenceTopicId);
        Assert.Null(plainInfo.PresenceOf);
    }

    [Theory]
    [MemberData(nameof(Transports))]
    public async Task ASubscriberWithAClientIdIsListedWithItsDataJoinsAndLeavesOnTheCompanionTopic(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: ShortGrace);
        await using var client = server.CreateLaharsubClient(transport);
        var room = await client.CreateTopicWithPresenceAsync().WaitAsync(TestSupport.Timeout);
        // The observer has no identity: it reads the events and is present nowhere.
        await using var observer = new EventReader(client.Subscribe([new(room.PresenceTopicId!.Value, 1)]));
        var alice = client.Subscribe([new(room.TopicId, 1)]);
        alice.ClientId = "alice";
        alice.MemberData = """{"name":"Alice"}""";
        var aliceReader = new EventReader(alice);
        _ = aliceReader.PendingStep;

        var joined = await NextPresenceEventAsync(observer);
        var page = await client.GetPresenceAsync(room.TopicId).WaitAsync(TestSupport.Timeout);
        await aliceReader.DisposeAsync();
        var left = await NextPresenceEventAsync(observer);
        var after = await client.GetPresenceAsync(room.TopicId).WaitAsync(TestSupport.Timeout);

        Assert.Equal(new PresenceEvent(PresenceEventType.Join, "alice", joined.Data, 1), joined);
        Assert.Equal("Alice", joined.Data!.Value.GetProperty("name").GetString());
        Assert.Equal(1, page.Occupancy);
        Assert.True(page.MembersShown);
        Assert.Null(page.Next);
        var member = Assert.Single(page.Members);
        Assert.Equal("alice", member.Member);
        Assert.Equal("Alice", member.Data!.Value.GetProperty("name").GetString());
        Assert.Equal((PresenceEventType.Leave, "alice", 0), (left.Type, left.Member, left.Occupancy));
        Assert.Equal(0, after.Occupancy);
        Assert.Empty(after.Members);
    }

    [Fact]
    public async Task AMemberOnTwoTabsStaysPresentWhenOneClosesAndLeavesWhenBothHave()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: ShortGrace);
        await using var client = server.CreateLaharsubClient(LaharsubTransport.WebSocket);
        var room = await client.CreateTopicWithPresenceAsync().WaitAsync(TestSupport.Timeout);
        await using var observer = new EventReader(client.Subscribe([new(room.PresenceTopicId!.Value, 1)]));
        var first = client.Subscribe([new(room.TopicId, 1)]);
        var second = client.Subscribe([new(room.TopicId, 1)]);
        first.ClientId = second.ClientId = "alice";
        var firstTab = new EventReader(first);
        await using var secondTab = new EventReader(second);
        _ = firstTab.PendingStep;
        var joined = await NextPresenceEventAsync(observer);
        // A message that reaches the second tab shows that its stream is open, so it holds the lease too.
        await client.PublishAsync(room.TopicId, "hello").WaitAsync(TestSupport.Timeout);
        Assert.Equal("hello", (await secondTab.NextAsync()).Text());

        await firstTab.DisposeAsync();
        // Well past the grace period (1 s) and several sweeps: the other tab still holds the lease.
        await observer.AssertQuietForAsync(TimeSpan.FromSeconds(3));
        var during = await client.GetPresenceAsync(room.TopicId).WaitAsync(TestSupport.Timeout);
        await secondTab.DisposeAsync();
        var left = await NextPresenceEventAsync(observer);

        Assert.Equal((PresenceEventType.Join, "alice", 1), (joined.Type, joined.Member, joined.Occupancy));
        Assert.Equal(["alice"], during.Members.Select(member => member.Member));
        Assert.Equal((PresenceEventType.Leave, "alice", 0), (left.Type, left.Member, left.Occupancy));
    }

    [Fact]
    public async Task TheMemberListIsPagedByMemberIdAndListAllReadsEveryPage()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var room = await client.CreateTopicWithPresenceAsync().WaitAsync(TestSupport.Timeout);
        await using var observer = new EventReader(client.Subscribe([new(room.PresenceTopicId!.Value, 1)]));
        var readers = new List<EventReader>();
        try
        {
            foreach (var id in new[] { "carol", "alice", "bob" })
            {
                var subscription = client.Subscribe([new(room.TopicId, 1)]);
                subscription.ClientId = id;
                var reader = new EventReader(subscription);
                _ = reader.PendingStep;
                readers.Add(reader);
            }
            for (var i = 0; i < 3; i++)
            {
                await NextPresenceEventAsync(observer);
            }

            var first = await client.GetPresenceAsync(room.TopicId, limit: 2).WaitAsync(TestSupport.Timeout);
            var second = await client.GetPresenceAsync(room.TopicId, first.Next, limit: 2).WaitAsync(TestSupport.Timeout);
            var all = await client.ListAllPresenceAsync(room.TopicId, pageSize: 1).ToListAsync().AsTask().WaitAsync(TestSupport.Timeout);

            Assert.Equal(["alice", "bob"], first.Members.Select(member => member.Member));
            Assert.Equal("bob", first.Next);
            Assert.Equal(3, first.Occupancy);
            Assert.Equal(["carol"], second.Members.Select(member => member.Member));
            Assert.Null(second.Next);
            Assert.Equal(["alice", "bob", "carol"], all.Select(member => member.Member));
            Assert.All(all, member => Assert.Null(member.Data));
        }
        finally
        {
            foreach (var reader in readers)
            {
                await reader.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task MemberDataAboveTheServersLimitEndsTheSubscriptionWithA400NamingMember()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var room = await client.CreateTopicWithPresenceAsync().WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(room.TopicId, 1)]);
        subscription.ClientId = "alice";
        // Within what the client lets through (4096 bytes), above the server's default 256.
        subscription.MemberData = $$"""{"name":"{{new string('a', 300)}}"}""";
        await using var reader = new EventReader(subscription);

        var error = await Assert.ThrowsAsync<LaharsubException>(() => reader.PendingStep.WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.BadRequest, error.StatusCode);
        Assert.Contains("member", error.Errors.Keys);
        Assert.Equal(0, (await client.GetPresenceAsync(room.TopicId).WaitAsync(TestSupport.Timeout)).Occupancy);
    }

    [Fact]
    public async Task TheMemberListOfATopicWithoutPresenceIsA409()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var plain = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        var error = await Assert.ThrowsAsync<LaharsubException>(() => client.GetPresenceAsync(plain).WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.Conflict, error.StatusCode);
    }

    [Fact]
    public async Task InJwtModeTheTokenSubjectIsTheMemberAndSubscribeAloneShowsTheOccupancyOnly()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings());
        LaharsubClient ClientWith(string claim, string subject)
        {
            var options = TestSupport.Options(transport: LaharsubTransport.WebSocket);
            var token = TestTokens.Grant(claim, subject);
            options.AccessTokenProvider = _ => ValueTask.FromResult<string?>(token);
            return new LaharsubClient(server.ApiAddress, options);
        }
        await using var admin = ClientWith("""{"create":true,"subscribe":true,"presence":true}""", "admin");
        await using var bob = ClientWith("""{"subscribe":true}""", "bob");
        var room = await admin.CreateTopicWithPresenceAsync().WaitAsync(TestSupport.Timeout);
        await using var observer = new EventReader(admin.Subscribe([new(room.PresenceTopicId!.Value, 1)]));
        var subscription = bob.Subscribe([new(room.TopicId, 1)]);
        subscription.MemberData = """{"name":"Bob"}""";
        await using var bobReader = new EventReader(subscription);
        _ = bobReader.PendingStep;

        var joined = await NextPresenceEventAsync(observer);
        var full = await admin.GetPresenceAsync(room.TopicId).WaitAsync(TestSupport.Timeout);
        var occupancyOnly = await bob.GetPresenceAsync(room.TopicId).WaitAsync(TestSupport.Timeout);

        Assert.Equal((PresenceEventType.Join, "bob"), (joined.Type, joined.Member));
        Assert.Equal("Bob", joined.Data!.Value.GetProperty("name").GetString());
        Assert.Equal(["bob"], full.Members.Select(member => member.Member));
        Assert.True(full.MembersShown);
        Assert.Equal(1, occupancyOnly.Occupancy);
        Assert.False(occupancyOnly.MembersShown);
        Assert.Empty(occupancyOnly.Members);
    }

    [Theory]
    [InlineData("""{"type":"join","member":"a","data":null,"occupancy":1}""", true)]
    [InlineData("""{"type":"leave","member":"a","data":{"name":"A"},"occupancy":0}""", true)]
    [InlineData("""{"type":"occupied","member":"a","data":null,"occupancy":1}""", false)]
    [InlineData("""{"type":"join","data":null,"occupancy":1}""", false)]
    [InlineData("""{"type":"join","member":"a","occupancy":-1}""", false)]
    [InlineData("""["join"]""", false)]
    [InlineData("hello", false)]
    public void TryParseReadsJoinsAndLeavesAndRefusesAnyOtherMessage(string body, bool expected)
    {
        var message = new LaharsubMessage(8, null, 1, DateTimeOffset.UnixEpoch, "application/json", Encoding.UTF8.GetBytes(body));

        Assert.Equal(expected, PresenceEvent.TryParse(message, out var presenceEvent));
        Assert.Equal(expected, presenceEvent is not null);
    }

    /// <summary>The next presence event the reader delivers, skipping nothing: anything else fails the test.</summary>
    private static async Task<PresenceEvent> NextPresenceEventAsync(EventReader reader)
    {
        var item = await reader.NextAsync();
        var message = Assert.IsType<LaharsubMessage>(item);
        Assert.True(PresenceEvent.TryParse(message, out var presenceEvent), $"Not a presence event: {message.GetString()}");
        return presenceEvent;
    }
}
