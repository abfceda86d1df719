using System.Text;
using System.Text.Json.Nodes;
using Laharsub.Server.Storage;
using Xunit;

namespace Laharsub.Server.Specification;

public abstract partial class LaharsubStoreSpecification
{
    // ---------------------------------------------------------------------------------------------------
    // State topics: a document changed by merge patches and replacements, atomically with the message ids

    private const string Patch = MergePatch.MediaType;

    /// <summary>A topic created with state says so in its info and holds the document <c>{}</c> at version 0; a topic without state holds none.</summary>
    [Fact]
    public async Task AStateTopicStartsWithAnEmptyDocumentAtVersionZero()
    {
        var store = await StartAsync();
        var state = await CreateStateTopicAsync(store, "prices");
        var plain = await CreateTopicAsync(store);

        var (results, messages) = await ReadAsync(store, Document(state.TopicId), Document(plain.TopicId));

        Assert.True(state.State);
        Assert.Equal("prices", state.Label);
        Assert.True((await InfoAsync(store, state.TopicId)).State);
        Assert.False((await InfoAsync(store, plain.TopicId)).State);
        Assert.Equal((true, 0L), (results[0].State, results[0].LastMessageId));
        AssertJson("{}", results[0].Document);
        Assert.False(results[1].State);
        Assert.Null(results[1].Document);
        Assert.Empty(messages);
    }

    /// <summary>Each merge patch is stored as the topic's next message (as a merge patch) and applied to the document, whose version is that message's id.</summary>
    [Fact]
    public async Task AMergePatchIsTheNextMessageAndChangesTheDocumentInTheSameStep()
    {
        var store = await StartAsync();
        var topic = await CreateStateTopicAsync(store);

        var first = await PublishAsync(store, topic.TopicId, Bytes("""{"bid":1.5,"ask":1.6,"venue":{"name":"X","open":true}}"""), Patch + "; charset=utf-8");
        var second = await PublishAsync(store, topic.TopicId, Bytes("""{"ask":null,"venue":{"open":false},"tags":[1,2]}"""), Patch);
        var (results, _) = await ReadAsync(store, Document(topic.TopicId));
        var (_, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal((PublishStatus.Published, 1L, PublishStatus.Published, 2L), (first.Status, first.MessageId, second.Status, second.MessageId));
        Assert.Equal(topic.Epoch, second.Epoch);
        Assert.Equal(2, results[0].LastMessageId);
        AssertJson("""{"bid":1.5,"venue":{"name":"X","open":false},"tags":[1,2]}""", results[0].Document);
        Assert.Equal([Patch, Patch], messages.Select(m => m.ContentType));
        AssertJson("""{"ask":null,"venue":{"open":false},"tags":[1,2]}""", messages[1].Body);
    }

    /// <summary>A state topic refuses a body of another content type, and bodies that are not one JSON object; nothing changes.</summary>
    [Fact]
    public async Task AStateTopicRefusesWhatIsNotAnObjectPatchAndChangesNothing()
    {
        var store = await StartAsync();
        var topic = await CreateStateTopicAsync(store);
        await PublishedIdAsync(store, topic.TopicId, Bytes("""{"a":1}"""), Patch);

        var statuses = new List<PublishStatus>
        {
            (await PublishAsync(store, topic.TopicId, Bytes("""{"a":2}"""), "application/json")).Status,
            (await PublishAsync(store, topic.TopicId, Bytes("hello"))).Status,
        };
        foreach (var body in new[] { "[1]", "\"a\"", "null", "{\"a\":", "{\"a\":1,\"a\":2}", "{} {}", new string('[', 70) + new string(']', 70) })
        {
            statuses.Add((await PublishAsync(store, topic.TopicId, Bytes(body), Patch)).Status);
        }
        var (results, messages) = await ReadAsync(store, Document(topic.TopicId));

        Assert.Equal([PublishStatus.NotAPatch, PublishStatus.NotAPatch, .. Enumerable.Repeat(PublishStatus.NotAnObject, 7)], statuses);
        Assert.Equal(1, results[0].LastMessageId);
        AssertJson("""{"a":1}""", results[0].Document);
        Assert.Equal(1, (await InfoAsync(store, topic.TopicId)).RetainedMessages);
    }

    /// <summary>A write that would make the document larger than MaxStateBytes is refused; one that keeps it within is taken.</summary>
    [Fact]
    public async Task AWriteThatMakesTheDocumentTooLargeIsRefused()
    {
        var store = await StartAsync(o => o.MaxStateBytes = 30);
        var topic = await CreateStateTopicAsync(store);
        await PublishedIdAsync(store, topic.TopicId, Bytes("""{"text":"0123456789"}"""), Patch);

        var patch = await PublishAsync(store, topic.TopicId, Bytes("""{"more":"0123456789"}"""), Patch);
        var replace = await Bounded(store.ReplaceStateAsync(new(topic.TopicId), Bytes("""{"text":"0123456789012345678901234567"}""")));
        var shrink = await PublishAsync(store, topic.TopicId, Bytes("""{"text":null,"more":"0123456789"}"""), Patch);
        var (results, _) = await ReadAsync(store, Document(topic.TopicId));

        Assert.Equal((PublishStatus.StateTooLarge, PublishStatus.StateTooLarge, PublishStatus.Published), (patch.Status, replace.Status, shrink.Status));
        Assert.Equal(2, shrink.MessageId);
        AssertJson("""{"more":"0123456789"}""", results[0].Document);
    }

    /// <summary>A merge patch to a topic without state is an ordinary message, kept with its content type.</summary>
    [Fact]
    public async Task AMergePatchToATopicWithoutStateIsAnOrdinaryMessage()
    {
        var store = await StartAsync();
        var topic = await CreateTopicAsync(store);

        var result = await PublishAsync(store, topic.TopicId, Bytes("[not json"), Patch + "; charset=utf-8");
        var (results, messages) = await ReadAsync(store, All(topic.TopicId));

        Assert.Equal(PublishStatus.Published, result.Status);
        Assert.False(results[0].State);
        Assert.Equal((Patch + "; charset=utf-8", "[not json"), (messages[0].ContentType, Texts(messages)[0]));
    }

    /// <summary>A replacement becomes the document and is stored as the next message: the compact document as application/json.</summary>
    [Fact]
    public async Task AReplacementIsTheWholeDocumentStoredAsTheNextMessage()
    {
        var store = await StartAsync();
        var topic = await CreateStateTopicAsync(store);
        await PublishedIdAsync(store, topic.TopicId, Bytes("""{"a":1,"b":{"c":2}}"""), Patch);
        var signalsBefore = _signals.CountOf(topic.TopicId);

        var result = await Bounded(store.ReplaceStateAsync(new(topic.TopicId, topic.Epoch), Bytes("""{ "b" : { "d" : [ 1, { } ] }, "n" : 123456789012345678901234567890 }""")));
        var (results, _) = await ReadAsync(store, Document(topic.TopicId));
        var (_, messages) = await ReadAsync(store, All(topic.TopicId, 2));

        Assert.Equal((PublishStatus.Published, 2L, topic.Epoch), (result.Status, result.MessageId, result.Epoch));
        Assert.Equal("""{"b":{"d":[1,{}]},"n":123456789012345678901234567890}""", Encoding.UTF8.GetString(results[0].Document!.Value.Span));
        Assert.Equal((MergePatch.DocumentMediaType, """{"b":{"d":[1,{}]},"n":123456789012345678901234567890}"""), (messages[0].ContentType, Texts(messages)[0]));
        Assert.True(await _signals.WaitForAsync(topic.TopicId, signalsBefore + 1, SignalBound), "a replacement must signal its topic");
    }

    /// <summary>A replacement is refused, changing nothing, for a missing topic, a topic without state, another incarnation, and a body that is not an object.</summary>
    [Fact]
    public async Task AReplacementIsRefusedWhereItCannotApply()
    {
        var store = await StartAsync();
        var state = await CreateStateTopicAsync(store);
        var plain = await CreateTopicAsync(store);
        var missing = plain.TopicId + 1000;
        var document = Bytes("""{"a":1}""");

        var statuses = new[]
        {
            (await Bounded(store.ReplaceStateAsync(new(missing), document))).Status,
            (await Bounded(store.ReplaceStateAsync(new(plain.TopicId), document))).Status,
            (await Bounded(store.ReplaceStateAsync(new(state.TopicId, "0000000000000000"), document))).Status,
            (await Bounded(store.ReplaceStateAsync(new(state.TopicId), Bytes("[1]")))).Status,
            (await Bounded(store.ReplaceStateAsync(new(state.TopicId), ReadOnlyMemory<byte>.Empty))).Status,
        };
        var (results, _) = await ReadAsync(store, Document(state.TopicId), All(plain.TopicId));

        Assert.Equal([PublishStatus.TopicNotFound, PublishStatus.NotAStateTopic, PublishStatus.EpochMismatch, PublishStatus.NotAnObject, PublishStatus.InvalidSize], statuses);
        Assert.Equal((0L, 0L), (results[0].LastMessageId, results[1].LastMessageId));
        AssertJson("{}", results[0].Document);
    }

    /// <summary>
    /// A write with IfVersion is a compare-and-set: taken while the version is still that one, refused with the current
    /// version and epoch once another write came first; for a patch to one or several topics and for a replacement.
    /// </summary>
    [Fact]
    public async Task IfVersionIsACompareAndSetOnTheDocument()
    {
        var store = await StartAsync();
        var topic = await CreateStateTopicAsync(store);

        var first = await PatchManyAsync(store, [new(topic.TopicId, topic.Epoch, IfVersion: 0)], """{"a":1}""");
        var stale = await PatchManyAsync(store, [new(topic.TopicId, IfVersion: 0)], """{"a":2}""");
        var staleReplace = await Bounded(store.ReplaceStateAsync(new(topic.TopicId, IfVersion: 0), Bytes("""{"a":3}""")));
        var replace = await Bounded(store.ReplaceStateAsync(new(topic.TopicId, IfVersion: 1), Bytes("""{"b":1}""")));
        var (results, _) = await ReadAsync(store, Document(topic.TopicId));

        Assert.Equal((PublishStatus.Published, 1L), (first.Status, first.Topics[0].MessageId));
        Assert.Equal(PublishStatus.VersionMismatch, stale.Status);
        Assert.Equal((PublishStatus.VersionMismatch, 1L, topic.Epoch), (stale.Topics[0].Status, stale.Topics[0].MessageId, stale.Topics[0].Epoch));
        Assert.Equal((PublishStatus.VersionMismatch, 1L, topic.Epoch), (staleReplace.Status, staleReplace.MessageId, staleReplace.Epoch));
        Assert.Equal((PublishStatus.Published, 2L), (replace.Status, replace.MessageId));
        AssertJson("""{"b":1}""", results[0].Document);
    }

    /// <summary>
    /// A merge patch to several topics is a patch on each state topic and an ordinary message on the others, all or
    /// none: one state topic refusing (here by its version) stores nothing anywhere.
    /// </summary>
    [Fact]
    public async Task APatchToSeveralTopicsAppliesToEachStateTopicAllOrNone()
    {
        var store = await StartAsync();
        var state = await CreateStateTopicAsync(store);
        var other = await CreateStateTopicAsync(store);
        var plain = await CreateTopicAsync(store);

        var refused = await PatchManyAsync(store, [new(state.TopicId), new(plain.TopicId), new(other.TopicId, IfVersion: 5)], """{"x":1}""");
        var published = await PatchManyAsync(store, [new(state.TopicId), new(plain.TopicId), new(other.TopicId, IfVersion: 0)], """{"x":1}""");
        var (results, messages) = await ReadAsync(store, All(state.TopicId), All(plain.TopicId), Document(other.TopicId));

        Assert.Equal(PublishStatus.VersionMismatch, refused.Status);
        Assert.Equal([PublishStatus.NotAttempted, PublishStatus.NotAttempted, PublishStatus.VersionMismatch], refused.Topics.Select(t => t.Status));
        Assert.Equal(PublishStatus.Published, published.Status);
        Assert.Equal([1L, 1L, 1L], published.Topics.Select(t => t.MessageId));
        Assert.Equal([Patch, Patch], messages.Select(m => m.ContentType));
        AssertJson("""{"x":1}""", results[2].Document);

        var notAnObject = await PatchManyAsync(store, [new(plain.TopicId), new(state.TopicId)], "[1]");
        Assert.Equal(PublishStatus.NotAnObject, notAnObject.Status);
        Assert.Equal(1, (await InfoAsync(store, plain.TopicId)).LastMessageId);
    }

    /// <summary>Retention drops a state topic's messages as any topic's, never its document.</summary>
    [Fact]
    public async Task RetentionNeverEvictsTheDocument()
    {
        var store = await StartAsync(o => { o.MaxMessagesPerTopic = 2; o.MessageTimeToLive = ShortTimeToLive; });
        var topic = await CreateStateTopicAsync(store);
        for (var i = 1; i <= 5; i++)
        {
            await PublishedIdAsync(store, topic.TopicId, Bytes($$"""{"f{{i}}":{{i}}}"""), Patch);
        }
        var (beforeExpiry, _) = await ReadAsync(store, Document(topic.TopicId));

        await LetRetentionPassAsync();
        var (afterExpiry, messages) = await ReadAsync(store, Document(topic.TopicId), All(topic.TopicId));

        Assert.Equal(4, beforeExpiry[0].FirstRetainedMessageId);
        AssertJson("""{"f1":1,"f2":2,"f3":3,"f4":4,"f5":5}""", beforeExpiry[0].Document);
        Assert.Empty(messages);
        Assert.Equal((5L, 6L), (afterExpiry[1].LastMessageId, afterExpiry[1].FirstRetainedMessageId));
        AssertJson("""{"f1":1,"f2":2,"f3":3,"f4":4,"f5":5}""", afterExpiry[0].Document);
    }

    /// <summary>The document counts in the store's retained bytes, also once the message that made it is gone.</summary>
    [Fact]
    public async Task TheDocumentCountsInRetainedBytes()
    {
        var store = await StartAsync(o => o.MaxMessagesPerTopic = 1);
        var topic = await CreateStateTopicAsync(store);
        var large = $$"""{"text":"{{new string('x', 5000)}}"}""";

        await PublishedIdAsync(store, topic.TopicId, Bytes(large), Patch);
        await PublishedIdAsync(store, topic.TopicId, Bytes("""{"n":1}"""), Patch);
        var statistics = await Bounded(store.GetStatisticsAsync());

        Assert.True(statistics.RetainedBytes >= 5000, $"a 5000-byte document is kept, but the store counts {statistics.RetainedBytes} retained bytes");
    }

    /// <summary>A replacement with an idempotency key is recorded as a publish's: the same request again replays the answer and stores nothing.</summary>
    [Fact]
    public async Task AReplacementWithAnIdempotencyKeyIsStoredOnce()
    {
        var store = await StartAsync();
        var topic = await CreateStateTopicAsync(store);
        var key = new IdempotencyKey("replace-1", "fingerprint-1");

        var first = await Bounded(store.ReplaceStateAsync(new(topic.TopicId), Bytes("""{"a":1}"""), key));
        var again = await Bounded(store.ReplaceStateAsync(new(topic.TopicId), Bytes("""{"a":1}"""), key));
        var other = await Bounded(store.ReplaceStateAsync(new(topic.TopicId), Bytes("""{"a":2}"""), key with { Fingerprint = "fingerprint-2" }));

        Assert.Equal((PublishStatus.Published, 1L), (first.Status, first.MessageId));
        Assert.Equal((PublishStatus.Published, 1L), (again.Status, again.MessageId));
        Assert.Equal(PublishStatus.IdempotencyKeyMismatch, other.Status);
        Assert.Equal(1, (await InfoAsync(store, topic.TopicId)).LastMessageId);
    }

    private static async Task<TopicInfo> CreateStateTopicAsync(ILaharsubStore store, string? label = null)
    {
        var topic = await Bounded(store.CreateTopicAsync(label, state: true)).ConfigureAwait(false);
        return topic ?? throw new Xunit.Sdk.XunitException("CreateTopicAsync(state: true) returned null, although fewer than MaxTopics topics exist.");
    }

    private static TopicReadRequest Document(long topicId) => new(topicId, 1, 1000, 1 << 20, WithDocument: true);

    private static byte[] Bytes(string text) => Encoding.UTF8.GetBytes(text);

    private static Task<MultiPublishResult> PatchManyAsync(ILaharsubStore store, PublishTarget[] targets, string text) =>
        Bounded(store.PublishManyAsync(targets, Bytes(text), Patch));

    private static void AssertJson(string expected, ReadOnlyMemory<byte>? actual)
    {
        Assert.True(actual.HasValue, "no document was returned");
        var text = Encoding.UTF8.GetString(actual.Value.Span);
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse(expected), JsonNode.Parse(text)), $"expected {expected}, got {text}");
    }
}
