using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Presence;

/// <summary>
/// The list of runs holding leases (<see cref="PresenceLeases"/>): a run's end only marks it, the sweeper's
/// tick unlinks ended runs and renews the live ones, and starts prune the list when no tick comes.
/// </summary>
public sealed class PresenceLeasesTests : IDisposable
{
    private readonly FakeTimeProvider _clock = new(new DateTimeOffset(2026, 11, 27, 0, 0, 0, TimeSpan.Zero));
    private readonly ServiceProvider _services;
    private readonly InMemoryStore _store;
    private readonly PresenceLeases _leases;

    public PresenceLeasesTests()
    {
        _services = new ServiceCollection()
            .AddLogging()
            .AddMetrics()
            .AddSingleton<TimeProvider>(_clock)
            .AddSingleton<ITopicSignals, TopicSignals>()
            .AddSingleton(Options.Create(new LaharsubStoreOptions()))
            .AddSingleton<InMemoryStore>()
            .AddSingleton<ILaharsubStore>(services => services.GetRequiredService<InMemoryStore>())
            .AddSingleton(Options.Create(new LaharsubPresenceOptions()))
            .AddSingleton<PresenceMetrics>()
            .AddSingleton<PresenceWebhook>()
            .AddSingleton<PresenceEvents>()
            .AddSingleton<PresenceLeases>()
            .BuildServiceProvider();
        _store = _services.GetRequiredService<InMemoryStore>();
        _leases = _services.GetRequiredService<PresenceLeases>();
    }

    public void Dispose() => _services.Dispose();

    [Fact]
    public async Task ATickUnlinksEndedRunsAndKeepsRenewingTheLiveOnesPastManyGracePeriodsWhileTheEndedOnesAreForgotten()
    {
        var topic = (await _store.CreateTopicWithPresenceAsync())!.TopicId;
        using var alice = _leases.Hold([new Subscription(topic, 1)], new PresenceIdentity("alice", null));
        var bob = _leases.Hold([new Subscription(topic, 1)], new PresenceIdentity("bob", null));
        bob!.Dispose();
        Assert.Equal(2, _leases.CountListedRuns());

        await _leases.RenewHeldAsync().WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(1, _leases.CountListedRuns());

        // Ticks every half renewal interval for three grace periods: alice's run renews her; bob's ended run does not.
        var departed = new List<string>();
        for (var moved = TimeSpan.Zero; moved < 3 * _leases.GracePeriod; moved += _leases.RenewInterval / 2)
        {
            _clock.Advance(_leases.RenewInterval / 2);
            await _leases.RenewHeldAsync().WaitAsync(TimeSpan.FromSeconds(10));
            departed.AddRange((await _store.SweepAsync(_clock.GetUtcNow(), 100)).Select(departure => departure.Member));
        }

        Assert.Equal(["bob"], departed);
        Assert.Equal(["alice"], (await _store.ListMembersAsync(topic, null, 10))!.Members.Select(member => member.Member));
        Assert.Equal(1, _leases.CountListedRuns());
        // Bob's lease record goes too, alice's stays.
        Assert.Equal(2, _leases.CountLeases());
        _leases.ForgetStale();
        Assert.Equal(1, _leases.CountLeases());
    }

    [Fact]
    public async Task WithoutTicksTheRunsStartedPruneTheListSoEndedRunsStayBounded()
    {
        var topic = (await _store.CreateTopicWithPresenceAsync())!.TopicId;
        using var held = _leases.Hold([new Subscription(topic, 1)], new PresenceIdentity("held", null));
        for (var i = 0; i < 3 * PresenceLeases.MinListedBeforePrune; i++)
        {
            _leases.Hold([new Subscription(topic, 1)], new PresenceIdentity("m" + (i % 100), null))!.Dispose();
        }

        Assert.InRange(_leases.CountListedRuns(), 1, PresenceLeases.MinListedBeforePrune + 1);
        await _leases.RenewHeldAsync().WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(1, _leases.CountListedRuns());
    }
}
