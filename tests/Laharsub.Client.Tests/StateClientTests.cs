using System.Net;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace Laharsub.Client.Tests;

/// <summary>
/// The client's side of state topics against a scripted server: RFC 7396 merge patches, the <c>state</c>
/// cursor and notice, a view that applies patches and replacements exactly and asks for the document
/// again when it cannot, and the state writes with their compare-and-set.
/// </summary>
public sealed class StateClientTests
{
    private static readonly Uri Api = new("http://a.test/ps/");

    /// <summary>RFC 7396, Appendix A: target, patch, result.</summary>
    public static TheoryData<string, string, string> Rfc7396Examples => new()
    {
        { """{"a":"b"}""", """{"a":"c"}""", """{"a":"c"}""" },
        { """{"a":"b"}""", """{"b":"c"}""", """{"a":"b","b":"c"}""" },
        { """{"a":"b"}""", """{"a":null}""", """{}""" },
        { """{"a":"b","b":"c"}""", """{"a":null}""", """{"b":"c"}""" },
        { """{"a":["b"]}""", """{"a":"c"}""", """{"a":"c"}""" },
        { """{"a":"c"}""", """{"a":["b"]}""", """{"a":["b"]}""" },
        { """{"a":{"b":"c"}}""", """{"a":{"b":"d","c":null}}""", """{"a":{"b":"d"}}""" },
        { """{"a":[{"b":"c"}]}""", """{"a":[1]}""", """{"a":[1]}""" },
        { """["a","b"]""", """["c","d"]""", """["c","d"]""" },
        { """{"a":"b"}""", """["c"]""", """["c"]""" },
        { """{"a":"foo"}""", "null", "null" },
        { """{"a":"foo"}""", "\"bar\"", "\"bar\"" },
        { """{"e":null}""", """{"a":1}""", """{"e":null,"a":1}""" },
        { "[1,2]", """{"a":"b","c":null}""", """{"a":"b"}""" },
        { "{}", """{"a":{"bb":{"ccc":null}}}""", """{"a":{"bb":{}}}""" },
    };

    [Theory]
    [MemberData(nameof(Rfc7396Examples))]
    public void AMergePatchGivesTheResultsOfRfc7396sExamples(string target, string patch, string expected)
    {
        var patchNode = JsonNode.Parse(patch);
        var patchBefore = patchNode?.ToJsonString();

        var result = JsonMergePatch.Apply(JsonNode.Parse(target), patchNode);

        Assert.True(JsonNode.DeepEquals(JsonNode.Parse(expected), result), $"Expected {expected}, got {result?.ToJsonString() ?? "null"}.");
        // The patch is left as it was, and the result shares none of its nodes.
        Assert.Equal(patchBefore, patchNode?.ToJsonString());
        if (result is JsonObject resultObject && patchNode is JsonObject)
        {
            resultObject["added"] = 1;
            Assert.Equal(patchBefore, patchNode.ToJsonString());
        }
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task AViewTakesTheDocumentThenAppliesPatchesAndReplacementsAndSaysWhichFieldsChanged(PollFormat format)
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options(format));
        var subscription = client.Subscribe([new(15, 1)]);
        var view = subscription.AddState<Quote>(14);
        var changes = new List<StateChangedEventArgs<Quote>>();
        view.Changed += (_, change) => changes.Add(change);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;

        var first = await handler.NextPollAsync();
        EpochTests.Respond(first, format, [StateNotice(14, "ep1", 3, """{"bid":1.0,"ask":2.0,"high":3.0}""")],
        [
            State(14, "ep1", 4, JsonMergePatch.MediaType, """{"bid":1.5,"ask":2.0}"""),
            EpochTests.Message(15, "ep2", 1, "ordinary"),
            State(14, "ep1", 5, "application/json", """{"bid":1.5,"low":0.5}"""),
            State(14, "ep1", 6, JsonMergePatch.MediaType, """{"low":null}"""),
        ]);
        var events = await reader.TakeAsync(5);
        _ = reader.PendingStep;
        var second = await handler.NextPollAsync();

        Assert.Equal("15:1,14:state", first.Topics);
        Assert.Equal([typeof(StateNotice), typeof(LaharsubMessage), typeof(LaharsubMessage), typeof(LaharsubMessage), typeof(LaharsubMessage)], events.Select(e => e.GetType()));
        Assert.Equal("15:2~ep2,14:7~ep1", second.Topics);
        Assert.Equal([
            (StateChangeKind.Snapshot, 3L, "bid,ask,high"),
            (StateChangeKind.Patch, 4L, "bid"),
            (StateChangeKind.Replace, 5L, "low,ask,high"),
            (StateChangeKind.Patch, 6L, "low"),
        ], changes.Select(c => (c.Kind, c.Version, string.Join(',', c.ChangedFields))));
        Assert.Equal(new Quote { Bid = 1.5 }, view.Value);
        Assert.Equal((6L, "ep1"), (view.Version, view.Epoch));
        Assert.Equal("""{"bid":1.5}""", view.GetDocument()!.ToJsonString());
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task AConflatedRunIsAppliedAndAFreshDocumentReplacesWhatTheViewHeld(PollFormat format)
    {
        await using var scripted = new ScriptedView(format);
        var (handler, view, reader) = (scripted.Handler, scripted.View, scripted.Reader);

        EpochTests.Respond(await handler.NextPollAsync(), format, [StateNotice(14, "ep1", 0, "{}")], []);
        await reader.NextAsync();
        _ = reader.PendingStep;
        // Patches 1..3 composed into one message with the last one's id.
        EpochTests.Respond(await handler.NextPollAsync(), format, [Notice("conflated", 14, "ep1", """ "fromMessageId":1,"toMessageId":2 """)],
            [State(14, "ep1", 3, JsonMergePatch.MediaType, """{"a":{"x":1},"b":2}""")]);
        await reader.TakeAsync(2);
        Assert.Equal(("""{"a":{"x":1},"b":2}""", 3L), (view.Value!.ToJsonString(), view.Version));
        var changes = view.ReadChangesAsync().GetAsyncEnumerator();
        Assert.True(await changes.MoveNextAsync().AsTask().WaitAsync(TestSupport.Timeout));
        Assert.Equal((StateChangeKind.Snapshot, 3L, "a,b"), (changes.Current.Kind, changes.Current.Version, string.Join(',', changes.Current.ChangedFields)));
        _ = reader.PendingStep;
        // Behind retention: the document again, whatever the view held.
        EpochTests.Respond(await handler.NextPollAsync(), format, [StateNotice(14, "ep1", 40, """{"a":{"x":1},"c":3}""")], []);
        await reader.NextAsync();

        Assert.True(await changes.MoveNextAsync().AsTask().WaitAsync(TestSupport.Timeout));
        Assert.Equal((StateChangeKind.Snapshot, 40L, "c,b"), (changes.Current.Kind, changes.Current.Version, string.Join(',', changes.Current.ChangedFields)));
        Assert.Equal("""{"a":{"x":1},"c":3}""", view.Value!.ToJsonString());
        await changes.DisposeAsync();
    }

    [Fact]
    public async Task AMessageThatDoesNotFollowTheVersionMakesTheViewAskForTheDocumentAgain()
    {
        await using var scripted = new ScriptedView(PollFormat.Json);
        var (handler, view, reader) = (scripted.Handler, scripted.View, scripted.Reader);

        EpochTests.Respond(await handler.NextPollAsync(), PollFormat.Json, [StateNotice(14, "ep1", 5, """{"a":1}""")],
            [State(14, "ep1", 7, JsonMergePatch.MediaType, """{"a":2}""")]);
        await reader.TakeAsync(2);
        _ = reader.PendingStep;
        var again = await handler.NextPollAsync();

        Assert.Equal("14:state", again.Topics);
        Assert.Equal(("""{"a":1}""", 5L), (view.Value!.ToJsonString(), view.Version));
        EpochTests.Respond(again, PollFormat.Json, [StateNotice(14, "ep1", 7, """{"a":2}""")], []);
        await reader.NextAsync();
        Assert.Equal(("""{"a":2}""", 7L), (view.Value!.ToJsonString(), view.Version));
    }

    [Fact]
    public async Task AResetLeavesTheCursorAskingForTheDocumentOfTheNewIncarnation()
    {
        await using var scripted = new ScriptedView(PollFormat.Json);
        var (handler, subscription, view, reader) = (scripted.Handler, scripted.Subscription, scripted.View, scripted.Reader);
        EpochTests.Respond(await handler.NextPollAsync(), PollFormat.Json, [StateNotice(14, "ep1", 5, """{"a":1}""")], []);
        await reader.NextAsync();
        _ = reader.PendingStep;

        // The connection breaks after the reset, before the new incarnation's document.
        EpochTests.Respond(await handler.NextPollAsync(), PollFormat.Json,
            [Notice("reset", 14, "ep2", """ "reason":"epochChanged","requestedFrom":6,"requestedEpoch":"ep1","firstMessageId":1,"lastMessageId":0 """)], []);
        Assert.IsType<ResetNotice>(await reader.NextAsync());
        _ = reader.PendingStep;
        var next = await handler.NextPollAsync();

        Assert.Equal("14:state", next.Topics);
        Assert.Equal(TopicCursor.ForState, subscription.Cursors[14]);
        EpochTests.Respond(next, PollFormat.Json, [StateNotice(14, "ep2", 0, "{}")], []);
        await reader.NextAsync();
        Assert.Equal(("{}", 0L, "ep2"), (view.Value!.ToJsonString(), view.Version, view.Epoch));
    }

    [Fact]
    public async Task SubscribeStateFollowsTheTopicOnItsOwnAndEndsWithTheServersRefusal()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options(PollFormat.Json));
        await using var view = client.SubscribeState<Quote>(14);

        var poll = await handler.NextPollAsync();
        EpochTests.Respond(poll, PollFormat.Json, [StateNotice(14, "ep1", 2, """{"bid":7.5}""")], []);

        Assert.Equal("14:state", poll.Topics);
        Assert.Equal(new Quote { Bid = 7.5 }, await view.WaitForValueAsync().WaitAsync(TestSupport.Timeout));
        (await handler.NextPollAsync()).RespondJson(HttpStatusCode.BadRequest,
            """{"title":"Invalid request","status":400,"detail":"topics: topic 14 holds no state.","errors":{"topics":["topic 14 holds no state."]}}""",
            "application/problem+json");
        var changes = view.ReadChangesAsync().GetAsyncEnumerator();
        // The document it had, then the refusal that ended the subscription.
        Assert.True(await changes.MoveNextAsync().AsTask().WaitAsync(TestSupport.Timeout));
        var refused = await Assert.ThrowsAsync<LaharsubException>(() => changes.MoveNextAsync().AsTask().WaitAsync(TestSupport.Timeout));
        Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
    }

    [Fact]
    public async Task ADocumentThatIsNotTheViewsTypeEndsTheSubscriptionWithTheSerializersError()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options(PollFormat.Json));
        await using var view = client.SubscribeState<Quote>(14);
        var closed = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        view.Subscription.Closed += (_, e) => closed.TrySetResult(e.Error);

        EpochTests.Respond(await handler.NextPollAsync(), PollFormat.Json, [StateNotice(14, "ep1", 1, """{"bid":"not a number"}""")], []);

        await Assert.ThrowsAsync<JsonException>(() => view.WaitForValueAsync().WaitAsync(TestSupport.Timeout));
        Assert.IsType<JsonException>(await closed.Task.WaitAsync(TestSupport.Timeout));
    }

    [Fact]
    public async Task WritesSendAMergePatchOrAReplacementWithTheirConditionsAndAConflictNamesTheCurrentVersion()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options());

        var created = client.CreateStateTopicAsync("prices");
        var create = await handler.NextAsync();
        var createBody = await create.BodyAsync();
        create.RespondJson(HttpStatusCode.Created, """{"topicId":14,"epoch":"ep1","label":"prices","state":true}""");
        Assert.Equal("""{"label":"prices","state":true}""", createBody);
        Assert.True((await created.WaitAsync(TestSupport.Timeout)).State);

        var read = client.GetStateAsync<Quote>(14);
        var get = await handler.NextAsync();
        get.RespondJson(HttpStatusCode.OK, """{"bid":1.25}""", headers: response => response.Headers.ETag = new("\"ep1:41\""));
        var snapshot = await read.WaitAsync(TestSupport.Timeout);
        Assert.Equal((HttpMethod.Get, "/ps/topics/14/state"), (get.Method, get.Uri.AbsolutePath));
        Assert.Equal(new StateSnapshot<Quote>(14, new Quote { Bid = 1.25 }, 41, "ep1"), snapshot);

        var patched = client.PatchStateAsync(14, new { bid = 1.5, ask = (double?)null }, snapshot.IfUnchanged());
        var patch = await handler.NextAsync();
        var patchBody = await patch.BodyAsync();
        patch.RespondJson(HttpStatusCode.OK, """{"topicId":14,"messageId":42,"epoch":"ep1"}""", headers: response => response.Headers.ETag = new("\"ep1:42\""));
        Assert.Equal((HttpMethod.Post, "/ps/topics/14", "application/merge-patch+json", "\"ep1:41\"", """{"bid":1.5,"ask":null}"""),
            (patch.Method, patch.Uri.AbsolutePath, ContentType(patch), patch.Headers.IfMatch.Single().ToString(), patchBody));
        Assert.Equal(42, (await patched.WaitAsync(TestSupport.Timeout)).MessageId);

        var replaced = client.ReplaceStateAsync(14, new JsonObject { ["bid"] = 2 }, snapshot.IfUnchanged());
        var put = await handler.NextAsync();
        var putBody = await put.BodyAsync();
        put.RespondJson(HttpStatusCode.PreconditionFailed,
            """{"title":"Precondition failed","status":412,"detail":"The state of topic 14 is at version 42.","epoch":"ep1","version":42}""",
            "application/problem+json");
        var conflict = await Assert.ThrowsAsync<StateConflictException>(() => replaced.WaitAsync(TestSupport.Timeout));
        Assert.Equal((HttpMethod.Put, "/ps/topics/14/state", "application/json", """{"bid":2}"""), (put.Method, put.Uri.AbsolutePath, ContentType(put), putBody));
        Assert.Equal((41L, 42L, "ep1"), (conflict.ExpectedVersion, conflict.CurrentVersion, conflict.CurrentEpoch));
        Assert.Contains("version 42", conflict.Message);
    }

    [Fact]
    public async Task ACompareAndSetWithoutItsEpochIsRefusedBeforeAnythingIsSent()
    {
        await using var client = new LaharsubClient(new Uri("http://127.0.0.1:9/ps/"));

        var refused = await Assert.ThrowsAsync<ArgumentException>(() => client.PatchStateAsync(14, new JsonObject { ["a"] = 1 }, new PublishOptions { ExpectedVersion = 3 }));

        Assert.Contains("ExpectedEpoch", refused.Message);
    }

    [Fact]
    public void AStateCursorSavesAndReadsBackAndPrintsAsTheWordState()
    {
        var cursor = TopicCursor.ForState;

        var json = JsonSerializer.Serialize(cursor);

        Assert.Equal((true, "state"), (cursor.IsState, cursor.ToString()));
        Assert.Equal(cursor, JsonSerializer.Deserialize<TopicCursor>(json));
    }

    private static string ContentType(ScriptedRequest request) => request.ContentType ?? "";

    private static string StateNotice(long topicId, string epoch, long version, string document) =>
        Notice("state", topicId, epoch, $"\"version\":{version},\"document\":{document}");

    private static string Notice(string type, long topicId, string epoch, string fields) =>
        $$"""{"type":"{{type}}","topicId":{{topicId}},"epoch":"{{epoch}}",{{fields}}}""";

    private static string State(long topicId, string epoch, long messageId, string contentType, string json) =>
        $$"""{"topicId":{{topicId}},"epoch":"{{epoch}}","messageId":{{messageId}},"publishedAt":"2026-11-22T09:30:01.500Z","contentType":"{{contentType}}","encoding":"text","body":{{JsonSerializer.Serialize(json)}}}""";

    /// <summary>A subscription to state topic 14 alone with its view, on a scripted server, its first poll under way.</summary>
    private sealed class ScriptedView : IAsyncDisposable
    {
        private readonly LaharsubClient _client;

        public ScriptedView(PollFormat format)
        {
            _client = new LaharsubClient(Handler.CreateClient(), [Api], TestSupport.Options(format));
            Subscription = _client.Subscribe();
            View = Subscription.AddState<JsonObject>(14);
            Reader = new EventReader(Subscription);
            _ = Reader.PendingStep;
        }

        public ScriptedHandler Handler { get; } = new();

        public LaharsubSubscription Subscription { get; }

        public LaharsubState<JsonObject> View { get; }

        public EventReader Reader { get; }

        public async ValueTask DisposeAsync()
        {
            await Reader.DisposeAsync();
            await _client.DisposeAsync();
        }
    }

    public sealed record Quote
    {
        public double? Bid { get; init; }
        public double? Ask { get; init; }
        public double? High { get; init; }
        public double? Low { get; init; }
    }
}
