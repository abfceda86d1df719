using System.Net;
using System.Reflection;
using System.Text;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Presence;

/// <summary>
/// Presence on the in-memory store (docs/protocol.md, "Presence"): opting in at creation, the companion
/// topic of events, leases taken and renewed by polls and streams, the grace period on the server's fake
/// clock, coalescing, the member list, and bad input.
/// </summary>
public sealed class PresenceTests
{
    private static readonly TimeSpan Grace = TimeSpan.FromSeconds(15);

    private static Task<LaharsubTestServer> StartAsync(FakeTimeProvider clock) =>
        LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock));

    /// <summary>A server on the in-memory store, or on the shared Redis under a key prefix of its own: bad input is answered alike on both.</summary>
    private static async Task<LaharsubTestServer> StartAsync(bool onRedis, Dictionary<string, string?>? settings = null)
    {
        settings ??= [];
        if (onRedis)
        {
            settings["Laharsub:Redis:Configuration"] = (await SharedRedis.GetAsync()).Configuration;
            settings["Laharsub:Redis:KeyPrefix"] = SharedRedis.UniquePrefix();
        }
        return await LaharsubTestServer.StartAsync(settings: settings);
    }

    public static TheoryData<string, string, bool> BadParameters()
    {
        var data = new TheoryData<string, string, bool>();
        string[][] cases =
        [
            ["client=has%20space", "client"], ["client=", "client"], ["client=" + new string('a', 65), "client"], ["member=%7B%7D", "member"],
            ["client=dan&member=%5B1%5D", "member"], ["client=dan&member=%7Bnot", "member"], ["client=dan&client=eve", "client"],
            // Text that is not Unicode: a lone surrogate escape in a value or a name, escapes of bytes that are not UTF-8.
            ["client=dan&member=%7B%22name%22%3A%22%5Cud800%22%7D", "member"], ["client=dan&member=%7B%22%5Cudc00%22%3A1%7D", "member"],
            ["client=dan&member=%7B%22name%22%3A%22%FF%22%7D", "member"], ["client=d%C3n", "client"],
        ];
        foreach (var onRedis in new[] { false, true })
        {
            foreach (var bad in cases)
            {
                data.Add(bad[0], bad[1], onRedis);
            }
        }
        return data;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ATopicCreatedWithPresenceShowsItsCompanionWhichClientsCannotPublishToOrDelete(bool onRedis)
    {
        await using var server = await StartAsync(onRedis);
        using var client = server.CreateClient();
        var (topic, companion) = await client.CreatePresenceTopicAsync("room-1");

        var info = await client.GetTopicAsync(topic);
        Assert.True(info.GetProperty("presence").GetBoolean());
        Assert.Equal(companion, info.GetProperty("presenceTopicId").GetInt64());
        Assert.Equal(topic, (await client.GetTopicAsync(companion)).GetProperty("presenceOf").GetInt64());
        Assert.False((await client.GetTopicAsync(await client.CreateTopicAsync())).TryGetProperty("presence", out _));

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{companion}") { Content = new StringContent("forged") });
        Assert.Equal((HttpStatusCode.Conflict, companion), (status, problem.GetProperty("topicId").GetInt64()));
        (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/publish?topics={topic},{companion}") { Content = new StringContent("forged") });
        Assert.Equal((HttpStatusCode.Conflict, companion), (status, problem.GetProperty("topicId").GetInt64()));
        (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Delete, $"topics/{companion}"));
        Assert.Equal((HttpStatusCode.Conflict, companion), (status, problem.GetProperty("topicId").GetInt64()));
        Assert.Empty(await client.EventsAsync(companion));

        using var deleted = await client.DeleteAsync($"topics/{topic}").WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        using var gone = await client.GetAsync($"topics/{companion}").WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.NotFound, gone.StatusCode);
    }

    [Fact]
    public async Task AMemberJoinsWithItsPollAndLeavesOnceTheGracePeriodAfterItPassesUnrenewed()
    {
        var clock = new FakeTimeProvider();
        await using var server = await StartAsync(clock);
        using var client = server.CreateClient();
        var (topic, companion) = await client.CreatePresenceTopicAsync();

        var member = Uri.EscapeDataString("""{"name":"Alice"}""");
        Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={topic}&timeout=0&client=alice&member={member}")).Status);

        await Eventually.HoldsAsync(async () => (await client.MembersAsync(topic)).Occupancy == 1, WireClient.Bound, "alice is present");
        var (occupancy, members, next) = await client.MembersAsync(topic);
        Assert.Equal([("alice", """{"name":"Alice"}""")], members);
        Assert.Null(next);
        Assert.Equal([("join", "alice", 1)], await client.EventsAsync(companion));

        // Still present within the grace period, gone after it, announced once.
        await clock.AdvanceInStepsAsync(Grace - TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(1));
        Assert.Equal(1, (await client.MembersAsync(topic)).Occupancy);
        await clock.AdvanceUntilAsync(async () => (await client.EventsAsync(companion)).Count == 2, TimeSpan.FromSeconds(1), "alice has left");
        Assert.Equal([("join", "alice", 1), ("leave", "alice", 0)], await client.EventsAsync(companion));
        Assert.Equal(0, (await client.MembersAsync(topic)).Occupancy);
    }

    [Fact]
    public async Task AMemberWhoPollsAgainWithinTheGracePeriodProducesNoEvents()
    {
        var clock = new FakeTimeProvider();
        await using var server = await StartAsync(clock);
        using var client = server.CreateClient();
        var (topic, companion) = await client.CreatePresenceTopicAsync();

        for (var poll = 0; poll < 4; poll++)
        {
            Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={topic}&timeout=0&client=bob")).Status);
            await clock.AdvanceInStepsAsync(Grace - TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(1));
        }

        Assert.Equal([("join", "bob", 1)], await client.EventsAsync(companion));
        Assert.Equal(1, (await client.MembersAsync(topic)).Occupancy);
    }

    [Fact]
    public async Task AMemberOnTwoTabsStaysPresentWhileOneTabsStreamHoldsAfterTheOtherCloses()
    {
        var clock = new FakeTimeProvider();
        await using var server = await StartAsync(clock);
        using var client = server.CreateClient();
        var (topic, companion) = await client.CreatePresenceTopicAsync();

        await using (var first = await EventStreamReader.OpenAsync(client, $"topics={topic}&client=carol"))
        {
            await first.ReadEventAsync("subscribed");
            await using var second = await EventStreamReader.OpenAsync(client, $"topics={topic}&client=carol");
            await second.ReadEventAsync("subscribed");
            await Eventually.HoldsAsync(async () => (await client.MembersAsync(topic)).Occupancy == 1, WireClient.Bound, "carol is present");
        }
        // The first tab is closed; the second renews through three grace periods.
        await clock.AdvanceInStepsAsync(3 * Grace, TimeSpan.FromSeconds(1));
        Assert.Equal([("carol", (string?)null)], (await client.MembersAsync(topic)).Members);
        Assert.Equal([("join", "carol", 1)], await client.EventsAsync(companion));
    }

    [Fact]
    public async Task AnObserverWithoutIdentityIsNeverPresentAndOthersAreListedInPages()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _) = await client.CreatePresenceTopicAsync();
        await client.PollAsync($"topics={topic}&timeout=0");
        foreach (var name in new[] { "zoe", "adam", "mia" })
        {
            await client.PollAsync($"topics={topic}&timeout=0&client={name}");
        }

        await Eventually.HoldsAsync(async () => (await client.MembersAsync(topic)).Occupancy == 3, WireClient.Bound, "three are present");
        var first = await client.MembersAsync(topic, "?limit=2");
        Assert.Equal((3, "adam,mia", "mia"), (first.Occupancy, string.Join(",", first.Members.Select(m => m.Member)), first.Next));
        var second = await client.MembersAsync(topic, "?limit=2&after=mia");
        Assert.Equal(("zoe", (string?)null), (string.Join(",", second.Members.Select(m => m.Member)), second.Next));
    }

    [Fact]
    public async Task AStoreWithoutPresenceRefusesATopicWithPresenceNamingItAndCreatesNothing()
    {
        await using var server = await LaharsubTestServer.StartAsync(services: s =>
            s.AddSingleton(provider => WithoutPresence.Over(ActivatorUtilities.CreateInstance<InMemoryStore>(provider))));
        using var client = server.CreateClient();
        Assert.False(server.Store is IPresenceStore, "the store under test must not keep presence");

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, "topics")
        {
            Content = new StringContent("""{"presence":true}""", Encoding.UTF8, "application/json"),
        });

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty("presence", out _), problem.ToString());
        Assert.Equal(0, (await server.Store.GetStatisticsAsync()).TopicCount);
    }

    /// <summary>An <see cref="ILaharsubStore"/> that forwards to another and implements nothing else, so no <see cref="IPresenceStore"/>.</summary>
    public class WithoutPresence : DispatchProxy
    {
        private ILaharsubStore? _inner;

        public static ILaharsubStore Over(ILaharsubStore inner)
        {
            var proxy = Create<ILaharsubStore, WithoutPresence>();
            ((WithoutPresence)(object)proxy)._inner = inner;
            return proxy;
        }

        protected override object? Invoke(MethodInfo? targetMethod, object?[]? args) => targetMethod!.Invoke(_inner, args);
    }

    [Theory]
    [MemberData(nameof(BadParameters))]
    public async Task BadPresenceParametersAreProblemsNamingThemAndTakeNoLease(string parameters, string named, bool onRedis)
    {
        await using var server = await StartAsync(onRedis);
        using var client = server.CreateClient();
        var (topic, companion) = await client.CreatePresenceTopicAsync();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&timeout=0&{parameters}"));

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty(named, out _), problem.ToString());
        Assert.Equal(0, (await client.MembersAsync(topic)).Occupancy);
        Assert.Empty(await client.EventsAsync(companion));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task MemberDataOverTheConfiguredSizeIsRefusedNamingMember(bool onRedis)
    {
        await using var server = await StartAsync(onRedis, new() { ["Laharsub:Presence:MaxMemberDataBytes"] = "32" });
        using var client = server.CreateClient();
        var (topic, _) = await client.CreatePresenceTopicAsync();
        var fits = Uri.EscapeDataString("""{"name":"Ann"}""");
        var tooLarge = Uri.EscapeDataString($$"""{"name":"{{new string('x', 30)}}"}""");

        Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={topic}&timeout=0&client=ann&member={fits}")).Status);
        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&timeout=0&client=ann&member={tooLarge}"));

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Contains("MaxMemberDataBytes", problem.GetProperty("errors").GetProperty("member")[0].GetString());
        Assert.Equal([("ann", """{"name":"Ann"}""")], (await client.MembersAsync(topic)).Members);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task ReadingPresenceRefusesBadPagingUnknownTopicsAndTopicsWithoutPresence(bool onRedis)
    {
        await using var server = await StartAsync(onRedis);
        using var client = server.CreateClient();
        var (topic, _) = await client.CreatePresenceTopicAsync();
        var plain = await client.CreateTopicAsync();

        foreach (var (query, named) in new[] { ("?limit=0", "limit"), ("?limit=1001", "limit"), ("?limit=x", "limit"), ("?after=", "after") })
        {
            var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, $"topics/{topic}/presence{query}"));
            Assert.Equal(HttpStatusCode.BadRequest, status);
            Assert.True(problem.GetProperty("errors").TryGetProperty(named, out _), problem.ToString());
        }
        var (noPresence, refusal) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, $"topics/{plain}/presence"));
        Assert.Equal((HttpStatusCode.Conflict, plain), (noPresence, refusal.GetProperty("topicId").GetInt64()));
        var (unknown, _) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, "topics/999/presence"));
        Assert.Equal(HttpStatusCode.NotFound, unknown);
        var (badBody, bodyProblem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, "topics")
        {
            Content = new StringContent("""{"presence":"yes"}""", Encoding.UTF8, "application/json"),
        });
        Assert.Equal(HttpStatusCode.BadRequest, badBody);
        Assert.True(bodyProblem.GetProperty("errors").TryGetProperty("presence", out _), bodyProblem.ToString());
    }
}
