using System.Net;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;
using Xunit.Abstractions;

namespace Laharsub.Server.Tests.Presence;

/// <summary>
/// Presence across instances on one Redis (docs/scale-out.md, "Presence on Redis"): a member held on one
/// instance is seen joining and leaving by a subscriber of the companion topic on another, and the members
/// of an instance killed with SIGKILL leave after the grace period, announced by the instance that is left.
/// </summary>
public sealed class RedisPresenceTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Grace = TimeSpan.FromSeconds(15);

    [Fact]
    public async Task AMemberHeldOnOneInstanceJoinsAndLeavesForASubscriberOnTheOther()
    {
        var clock = new FakeTimeProvider();
        var redis = await SharedRedis.GetAsync();
        var prefix = SharedRedis.UniquePrefix();
        void OnRedis(IServiceCollection services)
        {
            services.AddSingleton<TimeProvider>(clock);
            services.AddLaharsub().AddRedis(o => { o.Configuration = redis.Configuration; o.KeyPrefix = prefix; });
        }
        await using var a = await LaharsubTestServer.StartAsync(services: OnRedis);
        await using var b = await LaharsubTestServer.StartAsync(services: OnRedis);
        using var onA = a.CreateClient();
        using var onB = b.CreateClient();
        var (topic, companion) = await onB.CreatePresenceTopicAsync();
        var observer = onB.PollAsync($"topics={companion}:1&timeout=60");
        await Eventually.HoldsAsync(() => Task.FromResult(b.WaitingPolls(companion) == 1), WireClient.Bound, "the observer waits on B");

        var alice = onA.PollAsync($"topics={topic}:1&timeout=60&client=alice");

        Assert.Equal(("join", "alice", 1), PresenceClient.Event(Assert.Single((await observer.WaitAsync(WireClient.Bound)).Messages)));
        Assert.Equal([("alice", (string?)null)], (await onB.MembersAsync(topic)).Members);

        // Alice's poll ends (a message); nobody renews her lease after the grace period it was released for.
        await onB.PublishTextAsync(topic, "hello");
        Assert.Equal(HttpStatusCode.OK, (await alice.WaitAsync(WireClient.Bound)).Status);
        await clock.AdvanceInStepsAsync(Grace - TimeSpan.FromSeconds(2), TimeSpan.FromSeconds(1));
        Assert.Equal(1, (await onB.MembersAsync(topic)).Occupancy);
        await clock.AdvanceUntilAsync(async () => (await onB.EventsAsync(companion)).Count == 2, TimeSpan.FromSeconds(1), "alice has left");

        // Both instances sweep: the leave is announced once, however many sweeps follow.
        await clock.AdvanceInStepsAsync(TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(1));
        Assert.Equal([("join", "alice", 1), ("leave", "alice", 0)], await onB.EventsAsync(companion));
        Assert.Empty((await onB.MembersAsync(topic)).Members);
    }

    [Fact]
    public async Task TheMembersOfAnInstanceKilledWithSigkillLeaveAfterTheGracePeriod()
    {
        var redis = await SharedRedis.GetAsync();
        var prefix = SharedRedis.UniquePrefix();
        string[] settings = [$"Laharsub:Redis:Configuration={redis.Configuration}", $"Laharsub:Redis:KeyPrefix={prefix}",
            "Laharsub:Presence:GracePeriod=00:00:02", "Laharsub:Presence:SweepInterval=00:00:00.500",
            "Laharsub:Demo:Enabled=false", "Logging:LogLevel:Default=Warning"];
        var started = await Task.WhenAll(HostProcess.StartAsync(settings), HostProcess.StartAsync(settings)).WaitAsync(TimeSpan.FromSeconds(90));
        await using var a = started[0];
        await using var b = started[1];
        using var onA = new HttpClient { BaseAddress = a.ApiAddress, Timeout = TimeSpan.FromSeconds(60) };
        using var onB = new HttpClient { BaseAddress = b.ApiAddress, Timeout = TimeSpan.FromSeconds(60) };
        var (topic, companion) = await onB.CreatePresenceTopicAsync();

        // Alice holds a long poll on A, renewed by A every third of the grace period while it lasts.
        var alice = onA.PollAsync($"topics={topic}:1&timeout=50&client=alice");
        var joined = await onB.PollAsync($"topics={companion}:1&timeout=30").WaitAsync(TimeSpan.FromSeconds(40));
        Assert.Equal(("join", "alice", 1), PresenceClient.Event(Assert.Single(joined.Messages)));
        Assert.Equal([("alice", (string?)null)], (await onB.MembersAsync(topic)).Members);

        var leaving = onB.PollAsync($"topics={companion}:2&timeout=30");
        await a.KillAsync();
        var killedAt = DateTimeOffset.UtcNow;

        // Grace (2 s) + a sweep interval + a wide margin for a loaded machine; the poll itself waits at most 30 s.
        var left = await leaving.WaitAsync(TimeSpan.FromSeconds(40));
        var after = DateTimeOffset.UtcNow - killedAt;
        output.WriteLine($"alice's leave came {after.TotalSeconds:F1} s after the SIGKILL (grace 2 s, sweep every 0.5 s)");
        Assert.Equal(("leave", "alice", 0), PresenceClient.Event(Assert.Single(left.Messages)));
        Assert.True(after < TimeSpan.FromSeconds(30), $"the leave came {after} after the kill");
        Assert.Empty((await onB.MembersAsync(topic)).Members);
        // The poll on A had its connection cut by the kill.
        await Assert.ThrowsAnyAsync<Exception>(() => alice.WaitAsync(TimeSpan.FromSeconds(20)));
    }
}
