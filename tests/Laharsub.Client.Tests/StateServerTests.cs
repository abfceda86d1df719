using System.Net;
using System.Text.Json.Nodes;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// State topics through the .NET client against the real server, on every transport: the view follows
/// patches and replacements exactly, a compare-and-set conflict names the current version, a view resumes
/// after a restart, and a cursor behind retention gets the document again.
/// </summary>
public sealed class StateServerTests
{
    public static TheoryData<LaharsubTransport> All => TransportTests.All;

    [Theory]
    [MemberData(nameof(All))]
    public async Task AViewHoldsTheDocumentAsTheServerDoesThroughPatchesAndReplacements(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        var topic = await client.CreateStateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PatchStateAsync(topic.TopicId, new JsonObject { ["bid"] = 1.0, ["ask"] = 2.0, ["meta"] = new JsonObject { ["venue"] = "LHR" } }).WaitAsync(TestSupport.Timeout);
        await using var view = client.SubscribeState<JsonObject>(topic.TopicId);
        var changes = view.ReadChangesAsync().GetAsyncEnumerator();

        var first = await NextAsync(changes);
        await client.PatchStateAsync(topic.TopicId, new { bid = 1.5, meta = new { venue = (string?)null, desk = "fx" } }).WaitAsync(TestSupport.Timeout);
        var patched = await NextAsync(changes);
        await client.ReplaceStateAsync(topic.TopicId, new JsonObject { ["bid"] = 2.0 }).WaitAsync(TestSupport.Timeout);
        var replaced = await NextAsync(changes);
        var onServer = await client.GetStateAsync(topic.TopicId).WaitAsync(TestSupport.Timeout);

        Assert.Equal((StateChangeKind.Snapshot, 1L, "ask,bid,meta"), (first.Kind, first.Version, Fields(first)));
        Assert.Equal((StateChangeKind.Patch, 2L, "bid,meta"), (patched.Kind, patched.Version, Fields(patched)));
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse("""{"bid":1.5,"ask":2,"meta":{"desk":"fx"}}"""), patched.Value), patched.Value!.ToJsonString());
        Assert.Equal((StateChangeKind.Replace, 3L, "ask,bid,meta"), (replaced.Kind, replaced.Version, Fields(replaced)));
        Assert.Equal((3L, topic.Epoch), (onServer.Version, onServer.Epoch));
        Assert.True(JsonNode.DeepEquals(onServer.Value, view.GetDocument()), $"view {view.GetDocument()!.ToJsonString()}, server {onServer.Value.ToJsonString()}");
        await changes.DisposeAsync();
    }

    /// <summary>Every transport, with flat patches (which compose into one) and with nested ones (which may not: the server then sends the document).</summary>
    public static TheoryData<LaharsubTransport, bool> TransportsAndNesting => new()
    {
        { LaharsubTransport.LongPolling, false },
        { LaharsubTransport.ServerSentEvents, false },
        { LaharsubTransport.WebSocket, false },
        { LaharsubTransport.LongPolling, true },
        { LaharsubTransport.ServerSentEvents, true },
        { LaharsubTransport.WebSocket, true },
    };

    [Theory]
    [MemberData(nameof(TransportsAndNesting))]
    public async Task UnderConflationAViewOfRandomPatchesEndsAtTheDocumentOfEveryPatchApplied(LaharsubTransport transport, bool nested)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        var topic = await client.CreateStateTopicAsync().WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe();
        // Long enough that the patches published below fall into few deliveries, however slow the machine.
        subscription.ConflationInterval = TimeSpan.FromSeconds(1);
        await using var view = subscription.AddState<JsonObject>(topic.TopicId);
        await using var reader = new EventReader(subscription);
        Assert.IsType<StateNotice>(await reader.NextAsync());
        var random = new Random(7396);
        JsonNode reference = new JsonObject();
        long last = 0;

        for (var i = 0; i < 60; i++)
        {
            var patch = RandomPatch(random, depth: nested ? 0 : 2);
            reference = JsonMergePatch.Apply(reference, patch)!;
            last = (await client.PatchStateAsync(topic.TopicId, patch).WaitAsync(TestSupport.Timeout)).MessageId;
        }
        // Reading the subscription drives the view: each event is applied before it is returned.
        var conflated = 0L;
        var messages = 0;
        while (view.Version < last)
        {
            switch (await reader.NextAsync())
            {
                case ConflatedNotice notice:
                    conflated += notice.Count;
                    break;
                case LaharsubMessage:
                    messages++;
                    break;
            }
        }

        Assert.True(JsonNode.DeepEquals(reference, view.GetDocument()), $"view {view.GetDocument()!.ToJsonString()}, reference {reference.ToJsonString()}");
        Assert.Equal(last, view.Version);
        // Flat patches always compose; nested ones may be sent as the document instead, in fewer deliveries either way.
        Assert.True(nested ? messages < 60 : conflated > 0, $"{messages} messages, {conflated} conflated: the test did not test conflation.");
    }

    private static readonly string[] Keys = ["a", "b", "c", "d", "e"];

    /// <summary>A merge patch of a few of the keys a..e: numbers, strings, arrays, removals, and below depth 2 objects patched in turn.</summary>
    private static JsonObject RandomPatch(Random random, int depth)
    {
        var patch = new JsonObject();
        foreach (var key in Keys.Where(_ => random.Next(3) == 0))
        {
            patch[key] = random.Next(depth < 2 ? 5 : 4) switch
            {
                0 => null,
                1 => random.Next(100),
                2 => $"s{random.Next(10)}",
                3 => new JsonArray(random.Next(3), random.Next(3)),
                _ => RandomPatch(random, depth + 1),
            };
        }
        return patch;
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task AStateTopicAddedWhileTheSubscriptionRunsStartsWithItsDocumentBesideTheOrdinaryTopic(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(transport);
        var ordinary = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var state = await client.CreateStateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PatchStateAsync(state.TopicId, new JsonObject { ["x"] = 1 }).WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(ordinary, 1)]);
        await using var reader = new EventReader(subscription);
        await client.PublishAsync(ordinary, "m1").WaitAsync(TestSupport.Timeout);
        Assert.Equal("m1", (await reader.NextAsync()).Text());

        var view = subscription.AddState<JsonObject>(state.TopicId);
        var notice = Assert.IsType<StateNotice>(await reader.NextAsync());
        await client.PatchStateAsync(state.TopicId, new JsonObject { ["y"] = 2 }).WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(ordinary, "m2").WaitAsync(TestSupport.Timeout);
        var rest = await reader.TakeAsync(2);

        Assert.Equal((state.TopicId, 1L), (notice.TopicId, notice.Version));
        Assert.Equal(["m2", "patch 2"], rest.Select(e => e is LaharsubMessage { ContentType: JsonMergePatch.MediaType } m ? $"patch {m.MessageId}" : e.Text()).Order(StringComparer.Ordinal));
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse("""{"x":1,"y":2}"""), view.GetDocument()), view.GetDocument()!.ToJsonString());
    }

    [Fact]
    public async Task AViewOverJsonPollsReadsTheNoticeAndThePatchesOfThatFormat()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(PollFormat.Json);
        var topic = await client.CreateStateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PatchStateAsync(topic.TopicId, new JsonObject { ["big"] = JsonNode.Parse("123456789012345678901234567890") }).WaitAsync(TestSupport.Timeout);
        await using var view = client.SubscribeState<JsonObject>(topic.TopicId);
        await view.WaitForValueAsync().WaitAsync(TestSupport.Timeout);
        var changes = view.ReadChangesAsync().GetAsyncEnumerator();

        await NextAsync(changes);
        await client.PatchStateAsync(topic.TopicId, new JsonObject { ["n"] = 1 }).WaitAsync(TestSupport.Timeout);
        var patched = await NextAsync(changes);

        Assert.Equal((StateChangeKind.Patch, 2L), (patched.Kind, patched.Version));
        // Numbers keep their text through the server and the view.
        Assert.Equal("""{"big":123456789012345678901234567890,"n":1}""", view.GetDocument()!.ToJsonString());
        await changes.DisposeAsync();
    }

    [Fact]
    public async Task ACompareAndSetAppliesOnTheVersionReadAndAConflictNamesTheCurrentOne()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateStateTopicAsync().WaitAsync(TestSupport.Timeout);
        var read = await client.GetStateAsync(topic.TopicId).WaitAsync(TestSupport.Timeout);

        var written = await client.PatchStateAsync(topic.TopicId, new JsonObject { ["n"] = 1 }, read.IfUnchanged()).WaitAsync(TestSupport.Timeout);
        var conflict = await Assert.ThrowsAsync<StateConflictException>(
            () => client.ReplaceStateAsync(topic.TopicId, new JsonObject { ["n"] = 2 }, read.IfUnchanged()).WaitAsync(TestSupport.Timeout));
        var after = await client.GetStateAsync(topic.TopicId).WaitAsync(TestSupport.Timeout);

        Assert.Equal((0L, 1L), (read.Version, written.MessageId));
        Assert.Equal((HttpStatusCode.PreconditionFailed, 0L, 1L, topic.Epoch), (conflict.StatusCode, conflict.ExpectedVersion, conflict.CurrentVersion, conflict.CurrentEpoch));
        Assert.Equal(("""{"n":1}""", 1L), (after.Value.ToJsonString(), after.Version));
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task AViewResumesAfterARestartFromItsVersionWithoutMissingAPatch(LaharsubTransport transport)
    {
        var first = await LaharsubTestServer.StartAsync();
        var keepData = LaharsubTestServer.KeepData(first);
        await using var client = first.CreateLaharsubClient(transport);
        var topic = await client.CreateStateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var view = client.SubscribeState<JsonObject>(topic.TopicId);
        var changes = view.ReadChangesAsync().GetAsyncEnumerator();
        await NextAsync(changes);
        var reconnected = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        view.Subscription.Reconnected += (_, _) => reconnected.TrySetResult();

        await first.DisposeAsync();
        await using var second = await LaharsubTestServer.StartAsync(services: keepData, port: first.BaseAddress.Port);
        await reconnected.Task.WaitAsync(TestSupport.Timeout);
        await client.PatchStateAsync(topic.TopicId, new JsonObject { ["a"] = 1 }).WaitAsync(TestSupport.Timeout);
        await client.PatchStateAsync(topic.TopicId, new JsonObject { ["b"] = 2 }).WaitAsync(TestSupport.Timeout);
        var a = await NextAsync(changes);
        var b = await NextAsync(changes);

        // Resumed from its version: the patches, not the document again.
        Assert.Equal([(StateChangeKind.Patch, 1L), (StateChangeKind.Patch, 2L)], [(a.Kind, a.Version), (b.Kind, b.Version)]);
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse("""{"a":1,"b":2}"""), view.GetDocument()), view.GetDocument()!.ToJsonString());
        await changes.DisposeAsync();
    }

    [Theory]
    [MemberData(nameof(All))]
    public async Task ACursorBehindRetentionGetsTheDocumentInsteadOfAGap(LaharsubTransport transport)
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 2);
        await using var client = server.CreateLaharsubClient(transport);
        var topic = await client.CreateStateTopicAsync().WaitAsync(TestSupport.Timeout);
        for (var i = 1; i <= 5; i++)
        {
            await client.PatchStateAsync(topic.TopicId, new JsonObject { [$"f{i}"] = i }).WaitAsync(TestSupport.Timeout);
        }
        await using var reader = new EventReader(client.Subscribe(new Dictionary<long, TopicCursor> { [topic.TopicId] = new(1, topic.Epoch) }));

        var state = Assert.IsType<StateNotice>(await reader.NextAsync());
        await client.PatchStateAsync(topic.TopicId, new JsonObject { ["f1"] = null }).WaitAsync(TestSupport.Timeout);
        var next = Assert.IsType<LaharsubMessage>(await reader.NextAsync());

        Assert.Equal(5L, state.Version);
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse("""{"f1":1,"f2":2,"f3":3,"f4":4,"f5":5}"""), JsonObject.Create(state.Document)), state.Document.GetRawText());
        Assert.Equal((6L, JsonMergePatch.MediaType), (next.MessageId, next.ContentType));
        Assert.Equal(new TopicCursor(7, topic.Epoch), reader.Subscription.Cursors[topic.TopicId]);
    }

    [Fact]
    public async Task AStateCursorOnATopicWithoutStateIsRefusedNamingTheField()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var view = client.SubscribeState<JsonObject>(topic);

        var refused = await Assert.ThrowsAsync<LaharsubException>(() => view.WaitForValueAsync().WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.BadRequest, refused.StatusCode);
        Assert.True(refused.Errors.ContainsKey("topics"), refused.Message);
    }

    /// <summary>The fields a change touched, in name order (the server's document order is its own).</summary>
    private static string Fields<T>(StateChangedEventArgs<T> change) => string.Join(',', change.ChangedFields.Order(StringComparer.Ordinal));

    private static async Task<StateChangedEventArgs<T>> NextAsync<T>(IAsyncEnumerator<StateChangedEventArgs<T>> changes)
    {
        Assert.True(await changes.MoveNextAsync().AsTask().WaitAsync(TestSupport.Timeout), "The view's changes ended where one was expected.");
        return changes.Current;
    }
}
