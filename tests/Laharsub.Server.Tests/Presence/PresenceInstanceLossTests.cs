using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Presence;

/// <summary>
/// An instance that goes away while its member's stream is open: the member's lease is no longer renewed and
/// another instance sharing the store announces the leave, once, after the grace period. Two in-process
/// servers share one in-memory store (as instances share Redis); the first is stopped, not SIGKILLed: the
/// same on Redis, with two server processes and a SIGKILL, is <see cref="RedisPresenceTests"/>.
/// </summary>
public sealed class PresenceInstanceLossTests
{
    [Fact]
    public async Task AMemberOfAnInstanceThatIsGoneLeavesAfterTheGracePeriodAnnouncedOnceByTheOther()
    {
        var clock = new FakeTimeProvider();
        var first = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock));
        await using var second = await LaharsubTestServer.StartAsync(services: s =>
        {
            s.AddSingleton<TimeProvider>(clock);
            LaharsubTestServer.KeepData(first)(s);
        });
        using var client = second.CreateClient();
        var (topic, companion) = await client.CreatePresenceTopicAsync();
        using (var firstClient = first.CreateClient())
        {
            var stream = await EventStreamReader.OpenAsync(firstClient, $"topics={topic}&client=dora");
            await stream.ReadEventAsync("subscribed");
            await Eventually.HoldsAsync(async () => (await client.MembersAsync(topic)).Occupancy == 1, WireClient.Bound, "dora is present");
            await first.DisposeAsync();
            await stream.DisposeAsync();
        }

        await clock.AdvanceUntilAsync(async () => (await client.EventsAsync(companion)).Count == 2, TimeSpan.FromSeconds(1), "dora has left");
        // Well past the grace period and more sweeps of the remaining instance: still one join and one leave.
        await clock.AdvanceInStepsAsync(TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(1));
        Assert.Equal([("join", "dora", 1), ("leave", "dora", 0)], await client.EventsAsync(companion));
        Assert.Equal(0, (await client.MembersAsync(topic)).Occupancy);
    }
}
