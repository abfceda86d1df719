using System.Text;
using Laharsub.Server.Storage;
using Xunit;

namespace Laharsub.Server.Specification;

/// <summary>
/// The presence specification: what every store that also implements <see cref="IPresenceStore"/> must do
/// (its remarks are the contract), as xUnit facts that call the store directly. A store's test project
/// subclasses it once and implements <see cref="CreateStoreAsync"/>; a store shared by several instances
/// overrides <see cref="OpenAnotherInstanceAsync"/> so that the sweep is checked across them.
/// </summary>
/// <remarks>
/// Leases run on the callers' clock, so the facts pass explicit times and never wait: they hold on a fake
/// clock and on real time alike. Every store call is bounded (15 seconds).
/// </remarks>
public abstract class LaharsubPresenceStoreSpecification : IAsyncLifetime
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(15);

    /// <summary>A fixed "now" of the callers' clock; the store keeps no clock of its own for leases.</summary>
    private static readonly DateTimeOffset T0 = new(2026, 11, 26, 12, 0, 0, TimeSpan.Zero);

    private readonly List<ILaharsubStore> _stores = [];

    /// <summary>
    /// Creates the store under test over an empty data set, enforcing <paramref name="options"/>; it must
    /// implement <see cref="IPresenceStore"/>. Called once or more per fact; each store is disposed after the
    /// fact if it is <see cref="IAsyncDisposable"/> or <see cref="IDisposable"/>.
    /// </summary>
    /// <param name="options">The limits the store must enforce.</param>
    protected abstract ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options);

    /// <summary>
    /// Another instance of <paramref name="store"/> over the same data (another server of a deployment), or
    /// <paramref name="store"/> itself for a store that is one process's only (the default); disposed after the fact.
    /// </summary>
    /// <param name="store">A store this specification created.</param>
    protected virtual ValueTask<ILaharsubStore> OpenAnotherInstanceAsync(ILaharsubStore store) => ValueTask.FromResult(store);

    /// <summary>Runs before each fact; nothing by default.</summary>
    public virtual Task InitializeAsync() => Task.CompletedTask;

    /// <summary>Runs after each fact: disposes the stores it created. An override that frees more calls this too.</summary>
    public virtual async Task DisposeAsync()
    {
        await CreatedStores.DisposeAsync(_stores.Distinct()).ConfigureAwait(false);
        _stores.Clear();
    }

    /// <summary>A member's first renewal joins it; its later renewals and another tab's do not; another member joins too.</summary>
    [Fact]
    public async Task AMemberJoinsOnceAndItsRenewalsDoNotJoinItAgain()
    {
        var (store, topic) = await StartWithTopicAsync();

        var first = await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(10));
        var again = await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(20));
        var bob = await RenewAsync(store, topic.TopicId, "bob", T0.AddSeconds(10));

        Assert.Equal(new PresenceRenewal(PresenceStatus.Done, true, 1, topic.PresenceTopicId!.Value), first);
        Assert.Equal(new PresenceRenewal(PresenceStatus.Done, false, 1, topic.PresenceTopicId.Value), again);
        Assert.Equal(new PresenceRenewal(PresenceStatus.Done, true, 2, topic.PresenceTopicId.Value), bob);
    }

    /// <summary>
    /// A topic with its maximum of members refuses a new one, storing nothing of it; its members still renew, and a
    /// place freed by the sweep is taken again.
    /// </summary>
    [Fact]
    public async Task ATopicWithItsMaximumOfMembersRefusesAnotherAndStoresNothingOfIt()
    {
        var (store, topic) = await StartWithTopicAsync();
        await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(1), maxMembers: 2);
        await RenewAsync(store, topic.TopicId, "bob", T0.AddSeconds(10), maxMembers: 2);

        var carol = await RenewAsync(store, topic.TopicId, "carol", T0.AddSeconds(10), """{"name":"Carol"}""", maxMembers: 2);
        var alice = await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(2), maxMembers: 2);
        var page = await ListAsync(store, topic.TopicId, after: null, limit: 10);
        var swept = await SweepAsync(store, T0.AddSeconds(5));
        var carolAgain = await RenewAsync(store, topic.TopicId, "carol", T0.AddSeconds(10), maxMembers: 2);

        Assert.Equal(new PresenceRenewal(PresenceStatus.Full, false, 2, topic.PresenceTopicId!.Value), carol);
        Assert.Equal(new PresenceRenewal(PresenceStatus.Done, false, 2, topic.PresenceTopicId.Value), alice);
        Assert.Equal(["alice", "bob"], page.Members.Select(member => member.Member));
        Assert.Equal("alice", Assert.Single(swept).Member);
        Assert.Equal(new PresenceRenewal(PresenceStatus.Done, true, 2, topic.PresenceTopicId.Value), carolAgain);
    }

    /// <summary>A member whose lease expired but was not swept yet renews as the same member: no join, and the sweep then finds it renewed.</summary>
    [Fact]
    public async Task AnExpiredMemberThatRenewsBeforeTheSweepIsNeitherJoinedNorSwept()
    {
        var (store, topic) = await StartWithTopicAsync();
        await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(1));

        var renewal = await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(12));
        var early = await SweepAsync(store, T0.AddSeconds(2));
        var late = await SweepAsync(store, T0.AddSeconds(12));

        Assert.False(renewal.Joined, "an expired member not swept yet that renews must not join again");
        Assert.Empty(early);
        var departure = Assert.Single(late);
        Assert.Equal(new PresenceDeparture(topic.TopicId, topic.PresenceTopicId!.Value, "alice", null, 0), departure);
    }

    /// <summary>A shorter lease (a release) never cuts a longer one another tab's renewal set.</summary>
    [Fact]
    public async Task AShorterLeaseDoesNotCutALongerOne()
    {
        var (store, topic) = await StartWithTopicAsync();
        await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(30));

        await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(2));

        Assert.Empty(await SweepAsync(store, T0.AddSeconds(10)));
        Assert.Equal(1, (await ListAsync(store, topic.TopicId, null, 10)).Occupancy);
    }

    /// <summary>
    /// Expired members are removed and returned once each, with their data and the occupancy left, even
    /// when two instances sweep at the same time in small batches; members whose leases run on stay.
    /// </summary>
    [Fact]
    public async Task EachExpiredMemberIsSweptExactlyOnceEvenByTwoInstancesAtOnce()
    {
        var (store, first) = await StartWithTopicAsync();
        var second = await CreateWithPresenceAsync(store);
        var other = await OpenAnotherInstanceAsync(store);
        Track(other);
        var expected = new HashSet<(long, string)>();
        for (var i = 0; i < 40; i++)
        {
            var topic = i % 2 == 0 ? first : second;
            await RenewAsync(store, topic.TopicId, $"m{i:D2}", T0.AddSeconds(1), i == 0 ? """{"name":"Zero"}""" : null);
            expected.Add((topic.TopicId, $"m{i:D2}"));
        }
        await RenewAsync(store, first.TopicId, "stays", T0.AddMinutes(5));

        var swept = await Task.WhenAll(SweepAllAsync(store), SweepAllAsync(other));

        var all = swept.SelectMany(departures => departures).ToList();
        Assert.Equal(expected.Count, all.Count);
        Assert.Equal(expected.OrderBy(x => x), all.Select(d => (d.TopicId, d.Member)).Order());
        Assert.Equal("""{"name":"Zero"}""", all.Single(d => d.Member == "m00").Data);
        Assert.All(all, d => Assert.Equal(d.TopicId == first.TopicId ? first.PresenceTopicId : second.PresenceTopicId, d.PresenceTopicId));
        // The occupancies each topic's departures report are its counts as it emptied: 20, then 19 ... down to 1 (the one that stays), each once.
        Assert.Equal(Enumerable.Range(1, 20).Reverse(), all.Where(d => d.TopicId == first.TopicId).Select(d => d.Occupancy).OrderDescending());
        Assert.Equal(Enumerable.Range(0, 20).Reverse(), all.Where(d => d.TopicId == second.TopicId).Select(d => d.Occupancy).OrderDescending());
        var left = await ListAsync(store, first.TopicId, null, 10);
        Assert.Equal(["stays"], left.Members.Select(m => m.Member));
        Assert.Empty(await SweepAsync(store, T0.AddSeconds(2)));
    }

    /// <summary>Members are listed in ordinal order of their ids, a page at a time after the last id of the page before, with their data and the occupancy.</summary>
    [Fact]
    public async Task MembersArePagedInOrdinalOrderWithTheirData()
    {
        var (store, topic) = await StartWithTopicAsync();
        string[] ids = ["carol", "Bob", "alice", "al", "a:b", "dave@example.org", "b-1"];
        foreach (var id in ids)
        {
            await RenewAsync(store, topic.TopicId, id, T0.AddSeconds(10), id == "carol" ? """{"name":"Carol"}""" : null);
        }
        var expected = ids.Order(StringComparer.Ordinal).ToArray();

        var listed = new List<PresenceMember>();
        string? after = null;
        PresencePage page;
        do
        {
            page = await ListAsync(store, topic.TopicId, after, 3);
            Assert.Equal(ids.Length, page.Occupancy);
            Assert.True(page.Members.Count <= 3, $"a page holds at most its limit; this one held {page.Members.Count}");
            listed.AddRange(page.Members);
            after = page.Members.Count == 0 ? after : page.Members[^1].Member;
        }
        while (page.HasMore);

        Assert.Equal(expected, listed.Select(m => m.Member));
        Assert.Equal("""{"name":"Carol"}""", listed.Single(m => m.Member == "carol").Data);
        Assert.All(listed.Where(m => m.Member != "carol"), m => Assert.Null(m.Data));
        var tail = await ListAsync(store, topic.TopicId, expected[^1], 3);
        Assert.Empty(tail.Members);
        Assert.False(tail.HasMore);
    }

    /// <summary>
    /// A topic with presence names its companion, and the companion its topic, in info and listings; clients'
    /// publishes to the companion are refused (alone or with other topics, nothing stored), the server's events are not.
    /// </summary>
    [Fact]
    public async Task TheCompanionIsNamedRefusesClientsPublishesAndTakesEvents()
    {
        var (store, topic) = await StartWithTopicAsync("room");
        var companionId = topic.PresenceTopicId!.Value;
        var body = Encoding.UTF8.GetBytes("""{"type":"join"}""");

        var single = await Bounded(store.PublishAsync(companionId, body, "application/json"));
        var many = await Bounded(store.PublishManyAsync(new PublishTarget[] { new(topic.TopicId), new(companionId) }, body, "application/json"));
        var afterRefusals = await InfoAsync(store, topic.TopicId);
        var companionBefore = await InfoAsync(store, companionId);
        var published = await Bounded(((IPresenceStore)store).PublishEventAsync(companionId, body));

        Assert.Equal(PublishStatus.PresenceTopic, single.Status);
        Assert.Equal(PublishStatus.PresenceTopic, many.Status);
        Assert.Equal(PublishStatus.PresenceTopic, many.Topics[1].Status);
        Assert.Equal(0, afterRefusals.LastMessageId);
        Assert.Equal(0, companionBefore.LastMessageId);
        Assert.Equal(PublishStatus.Published, published.Status);
        Assert.Equal(1, published.MessageId);
        Assert.Equal((companionId, (long?)null, "room"), (afterRefusals.PresenceTopicId, afterRefusals.PresenceOf, afterRefusals.Label));
        Assert.Equal(((long?)null, (long?)topic.TopicId), (companionBefore.PresenceTopicId, companionBefore.PresenceOf));
        var listed = await Bounded(store.ListTopicsAsync(0, 10));
        Assert.Equal([(topic.TopicId, (long?)companionId, (long?)null), (companionId, null, topic.TopicId)],
            listed.Select(t => (t.TopicId, t.PresenceTopicId, t.PresenceOf)));
    }

    /// <summary>Deleting a topic with presence deletes its companion and its members, and the sweep then has nothing to announce for them.</summary>
    [Fact]
    public async Task DeletingATopicDeletesItsCompanionAndItsMembers()
    {
        var (store, topic) = await StartWithTopicAsync();
        var kept = await CreateWithPresenceAsync(store);
        await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(1));
        await RenewAsync(store, kept.TopicId, "bob", T0.AddSeconds(1));

        Assert.True(await Bounded(store.DeleteTopicAsync(topic.TopicId)));

        Assert.Null(await Bounded(store.GetTopicAsync(topic.PresenceTopicId!.Value)));
        Assert.Null(await Bounded(((IPresenceStore)store).ListMembersAsync(topic.TopicId, null, 10)));
        Assert.Equal(PresenceStatus.TopicNotFound, (await RenewAsync(store, topic.TopicId, "alice", T0.AddSeconds(5))).Status);
        var departure = Assert.Single(await SweepAsync(store, T0.AddSeconds(2)));
        Assert.Equal((kept.TopicId, "bob"), (departure.TopicId, departure.Member));
        Assert.Equal(2, (await Bounded(store.GetStatisticsAsync())).TopicCount);
    }

    /// <summary>A topic with presence counts two against MaxTopics (its companion is a topic): both are created or neither.</summary>
    [Fact]
    public async Task ATopicWithPresenceCountsTwoAgainstMaxTopics()
    {
        var store = await StartAsync(maxTopics: 3);

        var first = await Bounded(((IPresenceStore)store).CreateTopicWithPresenceAsync());
        var second = await Bounded(((IPresenceStore)store).CreateTopicWithPresenceAsync());
        var plain = await Bounded(store.CreateTopicAsync());

        Assert.NotNull(first);
        Assert.Null(second);
        Assert.NotNull(plain);
        Assert.Equal(3, (await Bounded(store.GetStatisticsAsync())).TopicCount);
        Assert.True(await Bounded(store.DeleteTopicAsync(first.TopicId)));
        Assert.NotNull(await Bounded(((IPresenceStore)store).CreateTopicWithPresenceAsync()));
    }

    /// <summary>Renewals and listings name a missing topic, and a topic without presence (a companion is one), without storing anything.</summary>
    [Fact]
    public async Task TopicsWithoutPresenceHaveNoMembers()
    {
        var (store, topic) = await StartWithTopicAsync();
        var plain = await Bounded(store.CreateTopicAsync());
        var presence = (IPresenceStore)store;

        Assert.Equal(PresenceStatus.NoPresence, (await RenewAsync(store, plain!.TopicId, "alice", T0.AddSeconds(1))).Status);
        Assert.Equal(PresenceStatus.NoPresence, (await RenewAsync(store, topic.PresenceTopicId!.Value, "alice", T0.AddSeconds(1))).Status);
        Assert.Equal(PresenceStatus.TopicNotFound, (await RenewAsync(store, 1_000_000, "alice", T0.AddSeconds(1))).Status);
        Assert.Null(await Bounded(presence.ListMembersAsync(plain.TopicId, null, 10)));
        Assert.Null(await Bounded(presence.ListMembersAsync(1_000_000, null, 10)));
        Assert.Empty(await SweepAsync(store, T0.AddSeconds(2)));
    }

    private async Task<ILaharsubStore> StartAsync(int maxTopics = 1000)
    {
        var store = await CreateStoreAsync(new LaharsubStoreOptions { MaxTopics = maxTopics }).AsTask().WaitAsync(Bound).ConfigureAwait(false);
        Track(store);
        Assert.True(store is IPresenceStore, $"{store.GetType().Name} must implement IPresenceStore for the presence specification");
        return store;
    }

    private void Track(ILaharsubStore store) => _stores.Add(store);

    private async Task<(ILaharsubStore Store, TopicInfo Topic)> StartWithTopicAsync(string? label = null)
    {
        var store = await StartAsync().ConfigureAwait(false);
        return (store, await CreateWithPresenceAsync(store, label).ConfigureAwait(false));
    }

    private static async Task<TopicInfo> CreateWithPresenceAsync(ILaharsubStore store, string? label = null)
    {
        var topic = await Bounded(((IPresenceStore)store).CreateTopicWithPresenceAsync(label)).ConfigureAwait(false);
        Assert.NotNull(topic);
        Assert.NotNull(topic.PresenceTopicId);
        return topic;
    }

    private static Task<PresenceRenewal> RenewAsync(ILaharsubStore store, long topicId, string member, DateTimeOffset expiresAt, string? data = null,
        int maxMembers = 1000) =>
        Bounded(((IPresenceStore)store).RenewAsync(topicId, member, data, expiresAt, maxMembers));

    private static async Task<PresencePage> ListAsync(ILaharsubStore store, long topicId, string? after, int limit)
    {
        var page = await Bounded(((IPresenceStore)store).ListMembersAsync(topicId, after, limit)).ConfigureAwait(false);
        Assert.NotNull(page);
        return page;
    }

    private static Task<IReadOnlyList<PresenceDeparture>> SweepAsync(ILaharsubStore store, DateTimeOffset now, int limit = 1000) =>
        Bounded(((IPresenceStore)store).SweepAsync(now, limit));

    /// <summary>Sweeps in batches of 3 until a sweep finds nothing, as every instance's sweeper does.</summary>
    private static async Task<List<PresenceDeparture>> SweepAllAsync(ILaharsubStore store)
    {
        var all = new List<PresenceDeparture>();
        for (var round = 0; round < 100; round++)
        {
            var batch = await SweepAsync(store, T0.AddSeconds(2), 3).ConfigureAwait(false);
            if (batch.Count == 0)
            {
                return all;
            }
            all.AddRange(batch);
        }
        Assert.Fail("the sweep kept returning members after 100 batches of 3 (there were 40)");
        return all;
    }

    private static async Task<TopicInfo> InfoAsync(ILaharsubStore store, long topicId)
    {
        var info = await Bounded(store.GetTopicAsync(topicId)).ConfigureAwait(false);
        Assert.NotNull(info);
        return info;
    }

    private static Task<T> Bounded<T>(ValueTask<T> operation) => operation.AsTask().WaitAsync(Bound);
}
