using System.Diagnostics;
using System.Text;
using Laharsub.Server.Storage;
using Xunit;
using Xunit.Sdk;

namespace Laharsub.Server.Specification;

/// <summary>
/// The store specification: what every <see cref="ILaharsubStore"/> must do, as xUnit facts that call the
/// store directly. A store's test project subclasses it once and implements <see cref="CreateStoreAsync"/>
/// (and <see cref="LetTimePassAsync"/> for the facts about time); xUnit then runs every fact against
/// that store. Each fact creates its own store over an empty data set and disposes it afterwards.
/// </summary>
/// <remarks>
/// The facts are grouped by what they check: creating topics, publishing, reading, retention, deleting,
/// listing, statistics and topic info; their names read as sentences. Every store call is bounded (15
/// seconds), so a store that hangs fails the fact instead of the run. Signals are checked through the
/// <see cref="ITopicSignals"/> handed to <see cref="CreateStoreAsync"/>, which records the topics the
/// store signals.
/// </remarks>
public abstract partial class LaharsubStoreSpecification : IAsyncLifetime
{
    private const string TextPlain = "text/plain; charset=utf-8";

    /// <summary>How long any one store call may take.</summary>
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(15);

    /// <summary>How long after a change returned its signal may come (a store with an engine signals through it).</summary>
    private static readonly TimeSpan SignalBound = TimeSpan.FromSeconds(10);

    private readonly List<ILaharsubStore> _stores = [];
    private RecordingTopicSignals _signals = new();

    /// <summary>
    /// Creates the store under test over an empty data set (no topics, nothing retained), enforcing
    /// <paramref name="options"/> and calling <paramref name="signals"/> when a topic changes. Called once
    /// per fact; the store is disposed after the fact if it is <see cref="IAsyncDisposable"/> or <see cref="IDisposable"/>.
    /// </summary>
    /// <param name="options">The limits the store must enforce; each fact sets those it checks and leaves the others at their defaults.</param>
    /// <param name="signals">Where the store says that a topic changed; it records what it is told.</param>
    protected abstract ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options, ITopicSignals signals);

    /// <summary>
    /// Lets <paramref name="time"/> pass for the store created last, including its retention sweep
    /// (<see cref="LaharsubStoreOptions.RetentionSweepInterval"/>): a store on a fake clock advances it
    /// (and runs what is due), a store that keeps time with its engine's clock waits it out
    /// (<c>Task.Delay(time)</c>). Only the facts about expiry and idle topics call it.
    /// </summary>
    /// <param name="time">How much time passes.</param>
    protected abstract Task LetTimePassAsync(TimeSpan time);

    /// <summary>
    /// The message time to live that the facts about expiry configure; they let it pass (and a third more)
    /// with <see cref="LetTimePassAsync"/>. Long enough that a message read right after it was published
    /// has not expired yet on a loaded machine. Two seconds unless overridden: a store on a fake clock may
    /// leave it; a store on real time may shorten it to make the run faster.
    /// </summary>
    protected virtual TimeSpan ShortTimeToLive => TimeSpan.FromSeconds(2);

    /// <summary>Runs before each fact; nothing by default.</summary>
    public virtual Task InitializeAsync() => Task.CompletedTask;

    /// <summary>Runs after each fact: disposes the store it created. An override that frees more calls this too.</summary>
    public virtual async Task DisposeAsync()
    {
        await CreatedStores.DisposeAsync(_stores).ConfigureAwait(false);
        _stores.Clear();
    }

    // ---------------------------------------------------------------------------------------------------
    // Creating topics

    /// <summary>Topic ids are positive, unique, and grow in the order the topics were created.</summary>
    [Fact]
    public async Task CreatedTopicsGetUniquePositiveIdsThatGrowInCreationOrder()
    {
        var store = await StartAsync();
        var ids = new List<long>();
        for (var i = 0; i < 5; i++)
        {
            ids.Add((await CreateTopicAsync(store)).TopicId);
        }

        Assert.Equal(5, ids.Distinct().Count());
        Assert.True(ids.SequenceEqual(ids.Order()), $"topic ids must grow in creation order; they were {string.Join(", ", ids)}");
        Assert.True(ids[0] > 0, $"topic ids must be positive (ListTopicsAsync(0, ...) lists them all); the first was {ids[0]}");
    }

    /// <summary>A new topic has no message (last id 0, first retained 1), a time of creation, no label, and an epoch no other topic has.</summary>
    [Fact]
    public async Task ANewTopicHasNoMessagesAndAnEpochOfItsOwn()
    {
        var store = await StartAsync();
        var first = await CreateTopicAsync(store);
        var second = await CreateTopicAsync(store);

        var info = await InfoAsync(store, first.TopicId);

        foreach (var topic in new[] { first, info })
        {
            Assert.Equal((first.TopicId, 0L, 1L, 0, 0L), (topic.TopicId, topic.LastMessageId, topic.FirstRetainedMessageId, topic.RetainedMessages, topic.RetainedBytes));
            Assert.Null(topic.Label);
        }
        Assert.False(string.IsNullOrEmpty(first.Epoch), "a topic must have an epoch");
        Assert.Equal(first.Epoch, info.Epoch);
        Assert.NotEqual(first.Epoch, second.Epoch);
        Assert.NotEqual(default, first.CreatedAt);
        Assert.Equal(first.CreatedAt, info.CreatedAt);
    }

    /// <summary>A label given at creation comes back from creation, info and listings; a topic created without one has none.</summary>
    [Fact]
    public async Task ALabelGivenAtCreationIsKeptInInfoAndListings()
    {
        var store = await StartAsync();
        var labelled = await CreateTopicAsync(store, "orders-eu");
        var plain = await CreateTopicAsync(store);

        var listed = await Bounded(store.ListTopicsAsync(0, 10));

        Assert.Equal("orders-eu", labelled.Label);
        Assert.Equal("orders-eu", (await InfoAsync(store, labelled.TopicId)).Label);
        Assert.Null(plain.Label);
        Assert.Null((await InfoAsync(store, plain.TopicId)).Label);
        Assert.Equal(["orders-eu", null], listed.Select(topic => topic.Label));
    }

    /// <summary>With <see cref="LaharsubStoreOptions.MaxTopics"/> topics, creating one more returns null; deleting one makes room again.</summary>
    [Fact]
    public async Task CreatingATopicBeyondMaxTopicsReturnsNullUntilOneIsDeleted()
    {
        var store = await StartAsync(o => o.MaxTopics = 2);
        await CreateTopicAsync(store);
        var second = await CreateTopicAsync(store);

        var refused = await Bounded(store.CreateTopicAsync());
        var countWhenFull = (await Bounded(store.GetStatisticsAsync())).TopicCount;
        Assert.True(await Bounded(store.DeleteTopicAsync(second.TopicId)));
        var again = await Bounded(store.CreateTopicAsync());
        var refusedAgain = await Bounded(store.CreateTopicAsync());

        Assert.Null(refused);
        Assert.Equal(2, countWhenFull);
        Assert.NotNull(again);
        Assert.Null(refusedAgain);
    }

    // ---------------------------------------------------------------------------------------------------
    // Publishing

    /// <summary>Each topic numbers its messages 1, 2, 3... on its own, and a publish answers the id and the topic's epoch.</summary>
    [Fact]
    public async Task MessagesGetConsecutiveIdsFromOneInEachTopic()
    {
        var store = await StartAsync();
        var a = await CreateTopicAsync(store);
        var b = await CreateTopicAsync(store);

        var published = new List<(long Topic, PublishResult Result)>();
        foreach (var (topic, text) in new[] { (a, "a1"), (b, "b1"), (a, "a2"), (a, "a3"), (b, "b2") })
        {
            published.Add((topic.TopicId, await PublishAsync(store, topic.TopicId, text)));
        }
        var (_, messages) = await ReadAsync(store, All(a.TopicId));

        Assert.All(published, p => Assert.Equal(PublishStatus.Published, p.Result.Status));
        Assert.Equal([1L, 2, 3], published.Where(p => p.Topic == a.TopicId).Select(p => p.Result.MessageId));
        Assert.Equal([1L, 2], published.Where(p => p.Topic == b.TopicId).Select(p => p.Result.MessageId));
        Assert.All(published, p => Assert.Equal(p.Topic == a.TopicId ? a.Epoch : b.Epoch, p.Result.Epoch));
        Assert.Equal([1L, 2, 3], messages.Select(m => m.MessageId));
        Assert.Equal(["a1", "a2", "a3"], Texts(messages));
        Assert.All(messages, m => Assert.Equal((a.TopicId, a.Epoch), (m.TopicId, m.Epoch)));
    }

    /// <summary>Publishers racing on one topic get every id from 1 exactly once, and the messages are read back in id order.</summary>
    [Fact]
    public async Task ConcurrentPublishersGetConsecutiveIdsWithoutHolesOrDuplicates()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);

        var publishers = Enumerable.Range(0, 8).Select(p => Task.Run(async () =>
        {
            var ids = new List<long>();
            for (var i = 0; i < 25; i++)
            {
                ids.Add((await PublishAsync(store, topic.TopicId, $"{p}/{i}")).MessageId);
            }
            return ids;
        }));
        var all = (await Task.WhenAll(publishers).WaitAsync(Bound)).SelectMany(ids => ids).Order().ToArray();
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal(Enumerable.Range(1, 200).Select(i => (long)i), all);
        Assert.Equal(Enumerable.Range(1, 200).Select(i => (long)i), messages.Select(m => m.MessageId));
    }

    /// <summary>The store keeps a copy of the body: the caller may overwrite its buffer once the publish returned, and a slice is stored as the slice.</summary>
    [Fact]
    public async Task APublishCopiesTheBodySoTheCallerMayReuseItsBuffer()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);
        var buffer = Encoding.UTF8.GetBytes("[[aaaaa]]");

        await PublishedIdAsync(store, topic.TopicId, buffer.AsMemory(2, 5));
        Encoding.UTF8.GetBytes("bbbbb", buffer.AsSpan(2));
        await PublishedIdAsync(store, topic.TopicId, buffer.AsMemory(2, 5));
        Encoding.UTF8.GetBytes("ccccc", buffer.AsSpan(2));
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal(["aaaaa", "bbbbb"], Texts(messages));
    }

    /// <summary>A message comes back byte for byte (zeros, line feeds, invalid UTF-8 included) with its content type and a time of publication.</summary>
    [Fact]
    public async Task AMessageKeepsItsBodyByteForByteItsContentTypeAndItsTime()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);
        byte[] binary = [0, 10, 13, 255, (byte)'\n', 0];

        await PublishedIdAsync(store, topic.TopicId, binary, "application/octet-stream");
        await PublishedIdAsync(store, topic.TopicId, Encoding.UTF8.GetBytes("héllo\nworld"), "text/plain;\tcharset=utf-8");
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal(2, messages.Count);
        Assert.Equal(binary, messages[0].Body.ToArray());
        Assert.Equal("application/octet-stream", messages[0].ContentType);
        Assert.Equal("héllo\nworld", Encoding.UTF8.GetString(messages[1].Body.Span));
        Assert.Equal("text/plain;\tcharset=utf-8", messages[1].ContentType);
        Assert.True(messages[0].PublishedAt >= topic.CreatedAt, $"a message must not be published ({messages[0].PublishedAt:O}) before its topic was created ({topic.CreatedAt:O})");
        Assert.True(messages[0].PublishedAt <= messages[1].PublishedAt, "publication times must follow the ids");
    }

    /// <summary>
    /// A message published while a recorded activity is current carries that activity's trace context (the
    /// server's poll spans link to it); one published under none, or under an activity that is not recorded,
    /// carries none (<see cref="Message.PublisherTraceContext"/>). The content type and body are unchanged.
    /// </summary>
    [Fact]
    public async Task AMessageCarriesTheTraceContextOfARecordedPublishAndNoneOtherwise()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);
        using var source = new ActivitySource($"spec-{Guid.NewGuid():N}");
        using var listener = new ActivityListener
        {
            ShouldListenTo = candidate => candidate == source,
            Sample = (ref ActivityCreationOptions<ActivityContext> options) =>
                options.Name == "recorded" ? ActivitySamplingResult.AllDataAndRecorded : ActivitySamplingResult.PropagationData,
        };
        ActivitySource.AddActivityListener(listener);
        Activity.Current = null;

        await PublishedIdAsync(store, topic.TopicId, "untraced"u8.ToArray());
        ActivityContext recorded;
        using (var publish = source.StartActivity("recorded"))
        {
            recorded = publish!.Context;
            await PublishedIdAsync(store, topic.TopicId, "traced"u8.ToArray());
        }
        using (source.StartActivity("sampled out"))
        {
            await PublishedIdAsync(store, topic.TopicId, "sampled out"u8.ToArray());
        }
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal(["untraced", "traced", "sampled out"], Texts(messages));
        Assert.Equal(default, messages[0].TraceContext);
        Assert.Equal((recorded.TraceId, recorded.SpanId, recorded.TraceFlags),
            (messages[1].TraceContext.TraceId, messages[1].TraceContext.SpanId, messages[1].TraceContext.TraceFlags));
        Assert.Equal(default, messages[2].TraceContext);
        Assert.All(messages, message => Assert.Equal(TextPlain, message.ContentType));
    }

    /// <summary>Publishing to a topic that does not exist answers <see cref="PublishStatus.TopicNotFound"/> and creates nothing.</summary>
    [Fact]
    public async Task PublishingToATopicThatDoesNotExistIsTopicNotFound()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);
        var missing = topic.TopicId + 1000;

        var result = await PublishAsync(store, missing, "nobody");

        Assert.Equal((PublishStatus.TopicNotFound, 0L), (result.Status, result.MessageId));
        Assert.Null(await Bounded(store.GetTopicAsync(missing)));
        Assert.Equal(1, (await Bounded(store.GetStatisticsAsync())).TopicCount);
    }

    /// <summary>An empty body and one larger than <see cref="LaharsubStoreOptions.MaxMessageBytes"/> are <see cref="PublishStatus.InvalidSize"/>, use no id and store nothing; a body of exactly the limit is published.</summary>
    [Fact]
    public async Task AnEmptyOrOversizedBodyIsInvalidSizeAndNothingIsStored()
    {
        var store = await StartAsync(o => o.MaxMessageBytes = 16);
        var topic = await CreateTopicAsync(store);

        var empty = await PublishAsync(store, topic.TopicId, ReadOnlyMemory<byte>.Empty);
        var oversized = await PublishAsync(store, topic.TopicId, new byte[17]);
        var afterRefusals = await InfoAsync(store, topic.TopicId);
        var atTheLimit = await PublishAsync(store, topic.TopicId, new byte[16]);

        Assert.Equal(PublishStatus.InvalidSize, empty.Status);
        Assert.Equal(PublishStatus.InvalidSize, oversized.Status);
        Assert.Equal((0L, 0), (afterRefusals.LastMessageId, afterRefusals.RetainedMessages));
        Assert.Equal((PublishStatus.Published, 1L), (atTheLimit.Status, atTheLimit.MessageId));
    }

    /// <summary>A content type that <see cref="Message.IsValidContentType"/> refuses is <see cref="PublishStatus.InvalidContentType"/> and stores nothing.</summary>
    /// <param name="contentType">A content type with a control character other than tab, or none.</param>
    [Theory]
    [InlineData("text/plain\r\nX-Injected: 1")]
    [InlineData("text/plain\n")]
    [InlineData("text/plain; a=\"\u0001\"")]
    [InlineData("text/plain\u007f")]
    [InlineData("")]
    public async Task AnInvalidContentTypeIsRefusedAndNothingIsStored(string contentType)
    {
        Assert.False(Message.IsValidContentType(contentType), "the case must be one that Message.IsValidContentType refuses");
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);

        var refused = await PublishAsync(store, topic.TopicId, "x"u8.ToArray(), contentType);
        var afterRefusal = await InfoAsync(store, topic.TopicId);
        var accepted = await PublishAsync(store, topic.TopicId, "y"u8.ToArray(), "text/plain");
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal(PublishStatus.InvalidContentType, refused.Status);
        Assert.Equal(0, afterRefusal.LastMessageId);
        Assert.Equal((PublishStatus.Published, 1L), (accepted.Status, accepted.MessageId));
        Assert.Equal(["y"], Texts(messages));
    }

    /// <summary>A publish for another incarnation of the topic (another epoch) is <see cref="PublishStatus.EpochMismatch"/>, names the topic's epoch, and stores nothing.</summary>
    [Fact]
    public async Task PublishingWithAnotherEpochIsEpochMismatchAndStoresNothing()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);
        var other = await CreateTopicAsync(store);

        var refused = await PublishAsync(store, topic.TopicId, "x", ifEpoch: other.Epoch);
        var info = await InfoAsync(store, topic.TopicId);
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal((PublishStatus.EpochMismatch, topic.Epoch, 0L), (refused.Status, refused.Epoch, refused.MessageId));
        Assert.Equal(0, info.LastMessageId);
        Assert.Empty(messages);
    }

    /// <summary>A publish for the topic's own epoch is published as any other.</summary>
    [Fact]
    public async Task PublishingWithTheTopicsEpochIsPublished()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);

        var first = await PublishAsync(store, topic.TopicId, "x", ifEpoch: topic.Epoch);
        var second = await PublishAsync(store, topic.TopicId, "y", ifEpoch: topic.Epoch);

        Assert.Equal((PublishStatus.Published, 1L, topic.Epoch), (first.Status, first.MessageId, first.Epoch));
        Assert.Equal((PublishStatus.Published, 2L, topic.Epoch), (second.Status, second.MessageId, second.Epoch));
    }

    /// <summary>
    /// When <see cref="LaharsubStoreOptions.MaxRetainedBytes"/> would be exceeded, a publish is
    /// <see cref="PublishStatus.StorageFull"/> with a positive <see cref="PublishResult.RetryAfter"/>, and
    /// nothing is stored or dropped to make room.
    /// </summary>
    [Fact]
    public async Task AFullStoreRefusesWithStorageFullSaysWhenToRetryAndDropsNothing()
    {
        var store = await StartAsync(o => { o.MaxRetainedBytes = 3800; o.MaxMessageBytes = 1000; });
        var topic = await CreateTopicAsync(store);
        var body = Encoding.UTF8.GetBytes(new string('x', 500));
        var stored = 0;
        PublishResult result;
        while ((result = await PublishAsync(store, topic.TopicId, body)).Status == PublishStatus.Published)
        {
            stored++;
            Assert.True(stored <= 7, "more than 7 messages of 500 bytes (3500 bytes of bodies) were stored under MaxRetainedBytes = 3800");
        }
        var again = await PublishAsync(store, topic.TopicId, body);
        var info = await InfoAsync(store, topic.TopicId);
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));
        var statistics = await Bounded(store.GetStatisticsAsync());

        Assert.Equal(PublishStatus.StorageFull, result.Status);
        Assert.True(result.RetryAfter > TimeSpan.Zero, $"a full store must say when to retry; RetryAfter was {result.RetryAfter}");
        Assert.Equal(PublishStatus.StorageFull, again.Status);
        Assert.True(stored >= 1, "at least one message of 500 bytes must fit under MaxRetainedBytes = 3800");
        Assert.Equal(((long)stored, 1L, stored), (info.LastMessageId, info.FirstRetainedMessageId, info.RetainedMessages));
        Assert.Equal(Enumerable.Range(1, stored).Select(i => (long)i), messages.Select(m => m.MessageId));
        Assert.InRange(statistics.RetainedBytes, 1, 3800);
    }

    /// <summary>After a publish is visible, the store calls <see cref="ITopicSignals.Signal"/> for its topic.</summary>
    [Fact]
    public async Task APublishSignalsItsTopic()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);
        var before = _signals.CountOf(topic.TopicId);

        await PublishedIdAsync(store, topic.TopicId, "wake up"u8.ToArray());
        var signalled = await _signals.WaitForAsync(topic.TopicId, before + 1, SignalBound);
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.True(signalled, $"the store did not call ITopicSignals.Signal({topic.TopicId}) within {SignalBound.TotalSeconds} s of the publish");
        Assert.Equal(["wake up"], Texts(messages));
    }

    // ---------------------------------------------------------------------------------------------------
    // Reading

    /// <summary>
    /// One read of several requests (the same topic twice included) writes each request's result and
    /// appends its messages after the previous request's, after what the list already held.
    /// </summary>
    [Fact]
    public async Task OneReadOfSeveralRequestsAppendsEachRequestsMessagesInRequestOrder()
    {
        var store = await StartAsync();
        var a = await CreateTopicAsync(store);
        var b = await CreateTopicAsync(store);
        foreach (var (topic, text) in new[] { (a, "a1"), (a, "a2"), (a, "a3"), (b, "b1"), (b, "b2") })
        {
            await PublishedIdAsync(store, topic.TopicId, Encoding.UTF8.GetBytes(text));
        }
        var earlier = new Message(0, "", 0, DateTimeOffset.UnixEpoch, "text/plain", "earlier"u8.ToArray());
        var messages = new List<Message> { earlier };
        var results = new TopicReadResult[3];

        await Bounded(store.ReadAsync(new TopicReadRequest[]
        {
            All(b.TopicId),
            new(a.TopicId, 2, 100, 1 << 20),
            new(a.TopicId, 1, 1, 1 << 20),
        }, results, messages));

        Assert.Same(earlier, messages[0]);
        Assert.Equal(["earlier", "b1", "b2", "a2", "a3", "a1"], Texts(messages));
        Assert.Equal(new TopicReadResult(true, b.Epoch, 2, 1, 2), results[0]);
        Assert.Equal(new TopicReadResult(true, a.Epoch, 3, 1, 2), results[1]);
        Assert.Equal(new TopicReadResult(true, a.Epoch, 3, 1, 1), results[2]);
    }

    /// <summary>A request for a topic that does not exist reports it missing with no message, and the other requests of the read are served.</summary>
    [Fact]
    public async Task ATopicThatDoesNotExistIsReadAsMissingAndAppendsNothing()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);
        await PublishedIdAsync(store, topic.TopicId, "here"u8.ToArray());
        var missing = topic.TopicId + 1000;
        // Filled with a result for each, so that a store that leaves one unwritten is seen.
        var results = Enumerable.Repeat(new TopicReadResult(true, "stale", 9, 9, 9), 3).ToArray();
        var messages = new List<Message>();

        await Bounded(store.ReadAsync(new[] { All(missing), All(topic.TopicId), All(missing + 1) }, results, messages));

        Assert.Equal((false, 0), (results[0].Exists, results[0].MessageCount));
        Assert.Equal(new TopicReadResult(true, topic.Epoch, 1, 1, 1), results[1]);
        Assert.Equal((false, 0), (results[2].Exists, results[2].MessageCount));
        Assert.Equal(["here"], Texts(messages));
    }

    /// <summary>A read returns the messages from its cursor on.</summary>
    [Fact]
    public async Task AReadStartsAtItsCursor()
    {
        var store = await StartAsync();
        var topic = await CreateTopicWithMessagesAsync(store, "m1", "m2", "m3", "m4", "m5");

        var (fromThree, messages) = await ReadAsync(store, All(topic.TopicId, from: 3));
        var (fromFive, last) = await ReadAsync(store, All(topic.TopicId, from: 5));

        Assert.Equal(["m3", "m4", "m5"], Texts(messages));
        Assert.Equal([3L, 4, 5], messages.Select(m => m.MessageId));
        Assert.Equal(new TopicReadResult(true, topic.Epoch, 5, 1, 3), fromThree[0]);
        Assert.Equal(["m5"], Texts(last));
        Assert.Equal(1, fromFive[0].MessageCount);
    }

    /// <summary>A read returns at most <see cref="TopicReadRequest.MaxMessages"/> messages; with 0 it reads only the topic's state.</summary>
    [Fact]
    public async Task AReadStopsAfterMaxMessages()
    {
        var store = await StartAsync();
        var topic = await CreateTopicWithMessagesAsync(store, "m1", "m2", "m3", "m4", "m5");

        var (two, messages) = await ReadAsync(store, new TopicReadRequest(topic.TopicId, 2, 2, 1 << 20));
        var (none, nothing) = await ReadAsync(store, new TopicReadRequest(topic.TopicId, 1, 0, 1 << 20));

        Assert.Equal(["m2", "m3"], Texts(messages));
        Assert.Equal(new TopicReadResult(true, topic.Epoch, 5, 1, 2), two[0]);
        Assert.Empty(nothing);
        Assert.Equal(new TopicReadResult(true, topic.Epoch, 5, 1, 0), none[0]);
    }

    /// <summary>
    /// A read stops as soon as the bodies it appended for the request reach <see cref="TopicReadRequest.MaxBytes"/>,
    /// the message that reaches it included (so one message larger than the limit still comes); each request counts its own bytes.
    /// </summary>
    [Fact]
    public async Task AReadStopsOnceTheBodiesReachMaxBytesAndIncludesTheMessageThatReachesIt()
    {
        var store = await StartAsync();
        var topic = await CreateTopicWithMessagesAsync(store, "msg1", "msg2", "msg3", "msg4", "msg5");

        var (results, messages) = await ReadAsync(store,
            new TopicReadRequest(topic.TopicId, 1, 100, 8),
            new TopicReadRequest(topic.TopicId, 1, 100, 9),
            new TopicReadRequest(topic.TopicId, 1, 100, 1),
            new TopicReadRequest(topic.TopicId, 4, 100, 4));

        Assert.Equal([2, 3, 1, 1], results.Select(r => r.MessageCount));
        Assert.Equal(["msg1", "msg2", "msg1", "msg2", "msg3", "msg1", "msg4"], Texts(messages));
    }

    /// <summary>A cursor below the first retained message reads from the first retained one (the result's first retained id shows the gap).</summary>
    [Fact]
    public async Task ACursorBeforeTheFirstRetainedMessageStartsAtTheFirstRetained()
    {
        var store = await StartAsync(o => o.MaxMessagesPerTopic = 3);
        var topic = await CreateTopicWithMessagesAsync(store, "m1", "m2", "m3", "m4", "m5");

        var (results, messages) = await ReadAsync(store, All(topic.TopicId, from: 1), All(topic.TopicId, from: 2));

        Assert.Equal(["m3", "m4", "m5", "m3", "m4", "m5"], Texts(messages));
        Assert.Equal([3L, 4, 5, 3, 4, 5], messages.Select(m => m.MessageId));
        Assert.All(results, r => Assert.Equal(new TopicReadResult(true, topic.Epoch, 5, 3, 3), r));
    }

    /// <summary>A cursor past the last message reads no message, and the result says where the topic ends.</summary>
    /// <param name="from">The cursor: the next id, or far beyond it (up to <see cref="long.MaxValue"/>).</param>
    [Theory]
    [InlineData(3L)]
    [InlineData(9L)]
    [InlineData(4294967298L)]
    [InlineData(long.MaxValue)]
    public async Task ACursorPastTheEndReadsNoMessageAndTheLastId(long from)
    {
        var store = await StartAsync();
        var topic = await CreateTopicWithMessagesAsync(store, "one", "two");

        var (results, messages) = await ReadAsync(store, All(topic.TopicId, from));

        Assert.Empty(messages);
        Assert.Equal(new TopicReadResult(true, topic.Epoch, 2, 1, 0), results[0]);
    }

    /// <summary>Reading a topic without messages reports it existing, with its epoch, last id 0 and first retained id 1.</summary>
    [Fact]
    public async Task ReadingAnEmptyTopicReportsItsEpochAndNoMessages()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);

        var (results, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Empty(messages);
        Assert.Equal(new TopicReadResult(true, topic.Epoch, 0, 1, 0), results[0]);
    }

    // ---------------------------------------------------------------------------------------------------
    // Retention

    /// <summary>Beyond <see cref="LaharsubStoreOptions.MaxMessagesPerTopic"/>, each publish drops the topic's oldest message; ids go on.</summary>
    [Fact]
    public async Task TheOldestMessagesBeyondMaxMessagesPerTopicAreDropped()
    {
        var store = await StartAsync(o => o.MaxMessagesPerTopic = 3);
        var topic = await CreateTopicAsync(store);
        var ids = new List<long>();
        for (var i = 1; i <= 5; i++)
        {
            ids.Add(await PublishedIdAsync(store, topic.TopicId, Encoding.UTF8.GetBytes($"m{i}")));
        }

        var (results, messages) = await ReadAsync(store, All(topic.TopicId));
        var info = await InfoAsync(store, topic.TopicId);

        Assert.Equal([1L, 2, 3, 4, 5], ids);
        Assert.Equal(["m3", "m4", "m5"], Texts(messages));
        Assert.Equal(new TopicReadResult(true, topic.Epoch, 5, 3, 3), results[0]);
        Assert.Equal((5L, 3L, 3, 6L), (info.LastMessageId, info.FirstRetainedMessageId, info.RetainedMessages, info.RetainedBytes));
    }

    /// <summary>Messages older than <see cref="LaharsubStoreOptions.MessageTimeToLive"/> are gone, the topic remembers its last id, and the next message gets the next id.</summary>
    [Fact]
    public async Task MessagesExpireAfterMessageTimeToLive()
    {
        var store = await StartAsync(o => o.MessageTimeToLive = ShortTimeToLive);
        var topic = await CreateTopicWithMessagesAsync(store, "old 1", "old 2");
        var (_, fresh) = await ReadAsync(store, All(topic.TopicId));

        await LetRetentionPassAsync();
        var expired = await InfoAsync(store, topic.TopicId);
        var (afterExpiry, none) = await ReadAsync(store, All(topic.TopicId));
        var next = await PublishAsync(store, topic.TopicId, "new");
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal(["old 1", "old 2"], Texts(fresh));
        Assert.Equal((2L, 3L, 0, 0L), (expired.LastMessageId, expired.FirstRetainedMessageId, expired.RetainedMessages, expired.RetainedBytes));
        Assert.Empty(none);
        Assert.Equal(new TopicReadResult(true, topic.Epoch, 2, 3, 0), afterExpiry[0]);
        Assert.Equal((PublishStatus.Published, 3L), (next.Status, next.MessageId));
        Assert.Equal(["new"], Texts(messages));
        Assert.Equal([3L], messages.Select(m => m.MessageId));
    }

    /// <summary>
    /// A topic with no publish and no read for <see cref="LaharsubStoreOptions.TopicIdleTimeToLive"/> is
    /// deleted by the retention sweep and signalled; a topic read meanwhile is kept.
    /// </summary>
    [Fact]
    public async Task ATopicUnusedForTopicIdleTimeToLiveIsDeletedAndSignalled()
    {
        var store = await StartAsync(o =>
        {
            o.TopicIdleTimeToLive = ShortTimeToLive * 4;
            o.RetentionSweepInterval = TimeSpan.FromMilliseconds(50);
        });
        var idle = await CreateTopicAsync(store);
        var busy = await CreateTopicAsync(store);
        var signalsBefore = _signals.CountOf(idle.TopicId);

        // Time passes in steps well under the idle time to live; the busy topic is read at every step,
        // the idle one only looked at (GetTopicAsync is not a use).
        var deleted = false;
        var steps = 0;
        for (; steps < 40 && !deleted; steps++)
        {
            await LetTimePassAsync(ShortTimeToLive / 2).WaitAsync(ShortTimeToLive + Bound);
            Assert.True((await ReadAsync(store, All(busy.TopicId))).Results[0].Exists, $"the topic read at every step was deleted at step {steps + 1}");
            deleted = await Bounded(store.GetTopicAsync(idle.TopicId)) is null;
            Assert.False(deleted && steps == 0, "the idle topic was deleted after half a time to live, long before its idle time to live");
        }
        var signalled = await _signals.WaitForAsync(idle.TopicId, signalsBefore + 1, SignalBound);
        var (results, _) = await ReadAsync(store, All(idle.TopicId));

        Assert.True(deleted, $"the idle topic was not deleted within {steps} steps of {ShortTimeToLive / 2} (idle time to live {ShortTimeToLive * 4})");
        Assert.True(signalled, $"the store did not call ITopicSignals.Signal({idle.TopicId}) within {SignalBound.TotalSeconds} s of deleting the idle topic");
        Assert.False(results[0].Exists);
        Assert.Equal(PublishStatus.TopicNotFound, (await PublishAsync(store, idle.TopicId, "late")).Status);
        Assert.Equal(1, (await Bounded(store.GetStatisticsAsync())).TopicCount);
    }

    // ---------------------------------------------------------------------------------------------------
    // Deleting

    /// <summary>Deleting a topic answers true; deleting it again, or a topic that never existed, answers false.</summary>
    [Fact]
    public async Task DeletingATopicAnswersTrueOnceThenFalse()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);

        var first = await Bounded(store.DeleteTopicAsync(topic.TopicId));
        var second = await Bounded(store.DeleteTopicAsync(topic.TopicId));
        var neverCreated = await Bounded(store.DeleteTopicAsync(topic.TopicId + 1000));

        Assert.True(first);
        Assert.False(second);
        Assert.False(neverCreated);
    }

    /// <summary>A deleted topic has no info, reads as missing, refuses publishes as not found and is not listed; other topics are untouched.</summary>
    [Fact]
    public async Task ADeletedTopicIsGoneForInfoReadsPublishesAndListings()
    {
        var store = await StartAsync();
        var deleted = await CreateTopicWithMessagesAsync(store, "gone");
        var kept = await CreateTopicWithMessagesAsync(store, "kept");

        Assert.True(await Bounded(store.DeleteTopicAsync(deleted.TopicId)));
        var (results, messages) = await ReadAsync(store, All(deleted.TopicId), All(kept.TopicId));
        var publish = await PublishAsync(store, deleted.TopicId, "late");
        var listed = await Bounded(store.ListTopicsAsync(0, 10));

        Assert.Null(await Bounded(store.GetTopicAsync(deleted.TopicId)));
        Assert.Equal((false, 0), (results[0].Exists, results[0].MessageCount));
        Assert.Equal(new TopicReadResult(true, kept.Epoch, 1, 1, 1), results[1]);
        Assert.Equal(["kept"], Texts(messages));
        Assert.Equal(PublishStatus.TopicNotFound, publish.Status);
        Assert.Equal([kept.TopicId], listed.Select(t => t.TopicId));
    }

    /// <summary>After a delete is visible, the store calls <see cref="ITopicSignals.Signal"/> for the topic.</summary>
    [Fact]
    public async Task DeletingATopicSignalsIt()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);
        var before = _signals.CountOf(topic.TopicId);

        Assert.True(await Bounded(store.DeleteTopicAsync(topic.TopicId)));
        var signalled = await _signals.WaitForAsync(topic.TopicId, before + 1, SignalBound);

        Assert.True(signalled, $"the store did not call ITopicSignals.Signal({topic.TopicId}) within {SignalBound.TotalSeconds} s of the delete");
        Assert.Null(await Bounded(store.GetTopicAsync(topic.TopicId)));
    }

    /// <summary>A topic created after a delete gets a new id, even when the deleted topic had the highest; the deleted id stays gone.</summary>
    [Fact]
    public async Task TopicIdsAreNotReusedAfterADelete()
    {
        var store = await StartAsync();
        var first = await CreateTopicAsync(store);
        var newest = await CreateTopicAsync(store);

        Assert.True(await Bounded(store.DeleteTopicAsync(newest.TopicId)));
        var next = await CreateTopicAsync(store);
        Assert.True(await Bounded(store.DeleteTopicAsync(first.TopicId)));
        var last = await CreateTopicAsync(store);

        Assert.True(next.TopicId > newest.TopicId, $"the topic created after deleting {newest.TopicId} got {next.TopicId}, not a new id above it");
        Assert.True(last.TopicId > next.TopicId, $"the topic created after deleting {first.TopicId} got {last.TopicId}, not above {next.TopicId}");
        Assert.NotEqual(newest.Epoch, next.Epoch);
        Assert.Null(await Bounded(store.GetTopicAsync(newest.TopicId)));
        Assert.Null(await Bounded(store.GetTopicAsync(first.TopicId)));
    }

    // ---------------------------------------------------------------------------------------------------
    // Listing

    /// <summary>Topics are listed in id order, a page of at most the limit after the given id, with current info and without deleted topics.</summary>
    [Fact]
    public async Task TopicsAreListedInIdOrderInPagesWithoutDeletedOnes()
    {
        var store = await StartAsync();
        var topics = new List<TopicInfo>();
        for (var i = 0; i < 5; i++)
        {
            topics.Add(await CreateTopicAsync(store));
        }
        await PublishedIdAsync(store, topics[2].TopicId, "one"u8.ToArray());
        await PublishedIdAsync(store, topics[2].TopicId, "two"u8.ToArray());
        Assert.True(await Bounded(store.DeleteTopicAsync(topics[1].TopicId)));

        var page1 = await Bounded(store.ListTopicsAsync(0, 2));
        var page2 = await Bounded(store.ListTopicsAsync(page1[^1].TopicId, 2));
        var page3 = await Bounded(store.ListTopicsAsync(page2[^1].TopicId, 2));
        var fromTheMiddle = await Bounded(store.ListTopicsAsync(topics[0].TopicId, 10));

        Assert.Equal([topics[0].TopicId, topics[2].TopicId], page1.Select(t => t.TopicId));
        Assert.Equal([topics[3].TopicId, topics[4].TopicId], page2.Select(t => t.TopicId));
        Assert.Empty(page3);
        Assert.Equal([topics[2].TopicId, topics[3].TopicId, topics[4].TopicId], fromTheMiddle.Select(t => t.TopicId));
        Assert.Equal((topics[2].Epoch, 2L, 2), (page1[1].Epoch, page1[1].LastMessageId, page1[1].RetainedMessages));
    }

    /// <summary>Listing after the last topic's id, or after ids near <see cref="long.MaxValue"/>, is an empty page.</summary>
    [Fact]
    public async Task ListingAfterTheLastTopicIsAnEmptyPage()
    {
        var store = await StartAsync();
        await CreateTopicAsync(store);
        var last = await CreateTopicAsync(store);

        foreach (var after in new[] { last.TopicId, long.MaxValue - 1, long.MaxValue })
        {
            var page = await Bounded(store.ListTopicsAsync(after, 10));
            Assert.True(page.Count == 0, $"listing after {after} must be empty; it held {string.Join(", ", page.Select(t => t.TopicId))}");
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // Statistics

    /// <summary>Statistics count the topics and the retained bytes: none in a new store, some after a publish, none again once the topics are deleted.</summary>
    [Fact]
    public async Task StatisticsCountTopicsAndTheBytesTheirMessagesRetain()
    {
        var store = await StartAsync();
        var empty = await Bounded(store.GetStatisticsAsync());
        var a = await CreateTopicAsync(store);
        var b = await CreateTopicAsync(store);
        var created = await Bounded(store.GetStatisticsAsync());
        await PublishedIdAsync(store, a.TopicId, new byte[100]);
        var published = await Bounded(store.GetStatisticsAsync());
        Assert.True(await Bounded(store.DeleteTopicAsync(a.TopicId)));
        var oneDeleted = await Bounded(store.GetStatisticsAsync());
        Assert.True(await Bounded(store.DeleteTopicAsync(b.TopicId)));
        var bothDeleted = await Bounded(store.GetStatisticsAsync());

        Assert.Equal(new StoreStatistics(0, 0), empty);
        Assert.Equal(new StoreStatistics(2, 0), created);
        Assert.Equal(2, published.TopicCount);
        Assert.True(published.RetainedBytes > 0, $"a retained message must count against MaxRetainedBytes; RetainedBytes was {published.RetainedBytes}");
        Assert.Equal(new StoreStatistics(1, 0), oneDeleted);
        Assert.Equal(new StoreStatistics(0, 0), bothDeleted);
    }

    /// <summary>The bytes of expired messages are released: once expiry is visible, the statistics count none.</summary>
    [Fact]
    public async Task StatisticsReleaseTheBytesOfExpiredMessages()
    {
        var store = await StartAsync(o => o.MessageTimeToLive = ShortTimeToLive);
        var topic = await CreateTopicWithMessagesAsync(store, "soon gone", "also gone");
        var published = await Bounded(store.GetStatisticsAsync());

        await LetRetentionPassAsync();
        var info = await InfoAsync(store, topic.TopicId);
        var expired = await Bounded(store.GetStatisticsAsync());

        Assert.True(published.RetainedBytes > 0, $"retained messages must count against MaxRetainedBytes; RetainedBytes was {published.RetainedBytes}");
        Assert.Equal(0, info.RetainedMessages);
        Assert.Equal(new StoreStatistics(1, 0), expired);
    }

    // ---------------------------------------------------------------------------------------------------
    // Topic info

    /// <summary>A topic's info follows its publishes and retention: last id, first retained id, retained messages and their body bytes; its epoch, label and time of creation stay.</summary>
    [Fact]
    public async Task TopicInfoReflectsPublishesAndRetention()
    {
        var store = await StartAsync(o => o.MaxMessagesPerTopic = 2);
        var topic = await CreateTopicAsync(store, "info");

        await PublishedIdAsync(store, topic.TopicId, "a"u8.ToArray());
        await PublishedIdAsync(store, topic.TopicId, "bb"u8.ToArray());
        var two = await InfoAsync(store, topic.TopicId);
        await PublishedIdAsync(store, topic.TopicId, "ccc"u8.ToArray());
        var three = await InfoAsync(store, topic.TopicId);

        Assert.Equal((2L, 1L, 2, 3L), (two.LastMessageId, two.FirstRetainedMessageId, two.RetainedMessages, two.RetainedBytes));
        Assert.Equal((3L, 2L, 2, 5L), (three.LastMessageId, three.FirstRetainedMessageId, three.RetainedMessages, three.RetainedBytes));
        Assert.Equal((topic.TopicId, topic.Epoch, "info", topic.CreatedAt), (three.TopicId, three.Epoch, three.Label, three.CreatedAt));
    }

    // ---------------------------------------------------------------------------------------------------
    // Helpers

    /// <summary>Creates this fact's store with default options changed by <paramref name="configure"/>.</summary>
    private async Task<ILaharsubStore> StartAsync(Action<LaharsubStoreOptions>? configure = null)
    {
        var options = new LaharsubStoreOptions();
        configure?.Invoke(options);
        var signals = new RecordingTopicSignals();
        var store = await CreateStoreAsync(options, signals).AsTask().WaitAsync(Bound).ConfigureAwait(false);
        Assert.NotNull(store);
        _stores.Add(store);
        _signals = signals;
        return store;
    }

    /// <summary>Lets <see cref="ShortTimeToLive"/> pass, and a third more.</summary>
    private Task LetRetentionPassAsync() => LetTimePassAsync(ShortTimeToLive + ShortTimeToLive / 3).WaitAsync(ShortTimeToLive * 2 + Bound);

    private static Task<T> Bounded<T>(ValueTask<T> operation) => operation.AsTask().WaitAsync(Bound);

    private static Task Bounded(ValueTask operation) => operation.AsTask().WaitAsync(Bound);

    private static async Task<TopicInfo> CreateTopicAsync(ILaharsubStore store, string? label = null)
    {
        var topic = await Bounded(store.CreateTopicAsync(label)).ConfigureAwait(false);
        return topic ?? throw new XunitException("CreateTopicAsync returned null, although fewer than MaxTopics topics exist.");
    }

    private static async Task<TopicInfo> CreateTopicWithMessagesAsync(ILaharsubStore store, params string[] texts)
    {
        var topic = await CreateTopicAsync(store).ConfigureAwait(false);
        foreach (var text in texts)
        {
            await PublishedIdAsync(store, topic.TopicId, Encoding.UTF8.GetBytes(text)).ConfigureAwait(false);
        }
        return topic;
    }

    private static async Task<TopicInfo> InfoAsync(ILaharsubStore store, long topicId)
    {
        var info = await Bounded(store.GetTopicAsync(topicId)).ConfigureAwait(false);
        return info ?? throw new XunitException($"GetTopicAsync({topicId}) returned null for a topic that exists.");
    }

    private static Task<PublishResult> PublishAsync(ILaharsubStore store, long topicId, string text, string? ifEpoch = null) =>
        Bounded(store.PublishAsync(topicId, Encoding.UTF8.GetBytes(text), TextPlain, ifEpoch));

    private static Task<PublishResult> PublishAsync(ILaharsubStore store, long topicId, ReadOnlyMemory<byte> body, string contentType = TextPlain) =>
        Bounded(store.PublishAsync(topicId, body, contentType));

    /// <summary>Publishes a message that must be accepted, and returns its id.</summary>
    private static async Task<long> PublishedIdAsync(ILaharsubStore store, long topicId, ReadOnlyMemory<byte> body, string contentType = TextPlain)
    {
        var result = await PublishAsync(store, topicId, body, contentType).ConfigureAwait(false);
        Assert.True(result.Status == PublishStatus.Published, $"publishing {body.Length} bytes to topic {topicId} answered {result.Status}");
        return result.MessageId;
    }

    /// <summary>Everything a topic retains from <paramref name="from"/> on (up to 1000 messages and 1 MiB).</summary>
    private static TopicReadRequest All(long topicId, long from = 1) => new(topicId, from, 1000, 1 << 20);

    private static async Task<(TopicReadResult[] Results, List<Message> Messages)> ReadAsync(ILaharsubStore store, params TopicReadRequest[] requests)
    {
        var results = new TopicReadResult[requests.Length];
        var messages = new List<Message>();
        await Bounded(store.ReadAsync(requests, results, messages)).ConfigureAwait(false);
        return (results, messages);
    }

    private static string[] Texts(IEnumerable<Message> messages) => [.. messages.Select(m => Encoding.UTF8.GetString(m.Body.Span))];
}
