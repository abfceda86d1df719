using System.Net;
using System.Text.Json;

namespace Laharsub.Client.Tests;

/// <summary>The client's side of topic epochs, against a scripted server: what it sends, what it makes of what it gets.</summary>
public sealed class EpochTests
{
    private static readonly Uri Api = new("http://a.test/ps/");

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task ASubscriptionLearnsEachTopicsEpochFromTheAnswerAndSendsItWithTheCursor(PollFormat format)
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options(format));
        await using var reader = new EventReader(client.Subscribe([new(14, 1), new(15, 3)]));
        _ = reader.PendingStep;

        var first = await handler.NextPollAsync();
        Respond(first, format, [], [Message(14, "9f3c0a1b2c3d4e5f", 1, "one")]);
        var message = Assert.IsType<LaharsubMessage>(await reader.NextAsync());
        _ = reader.PendingStep;
        var second = await handler.NextPollAsync();

        Assert.Equal("14:1,15:3", first.Topics);
        Assert.Equal("9f3c0a1b2c3d4e5f", message.Epoch);
        Assert.Equal("14:2~9f3c0a1b2c3d4e5f,15:3", second.Topics);
        Assert.Equal(new TopicCursor(2, "9f3c0a1b2c3d4e5f"), reader.Subscription.Cursors[14]);
        Assert.Equal(new TopicCursor(3), reader.Subscription.Cursors[15]);
    }

    [Fact]
    public async Task SavedCursorsWithEpochsRoundTripThroughJsonAndStartTheNextSubscription()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options());
        var saved = new Dictionary<long, TopicCursor> { [14] = new(43, "k3f9"), [15] = new(1) };

        var json = JsonSerializer.Serialize(saved);
        var restored = JsonSerializer.Deserialize<Dictionary<long, TopicCursor>>(json)!;
        var fromBeforeEpochs = JsonSerializer.Deserialize<Dictionary<long, TopicCursor>>("""{"14":43}""")!;
        await using var reader = new EventReader(client.Subscribe(restored));
        _ = reader.PendingStep;
        var poll = await handler.NextPollAsync();

        Assert.Equal("""{"14":{"from":43,"epoch":"k3f9"},"15":{"from":1}}""", json);
        Assert.Equal(saved, restored);
        Assert.Equal(new TopicCursor(43), fromBeforeEpochs[14]);
        Assert.Equal("14:43~k3f9,15:1", poll.Topics);
        Assert.Equal(saved, reader.Subscription.Cursors);
        Assert.Equal("43~k3f9", saved[14].ToString());
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task AResetToAnotherEpochSaysSoAndTheSubscriptionGoesOnInTheNewIncarnation(PollFormat format)
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options(format));
        await using var reader = new EventReader(client.Subscribe(new Dictionary<long, TopicCursor> { [2] = new(6, "old") }));
        _ = reader.PendingStep;

        var poll = await handler.NextPollAsync();
        Respond(poll, format,
            ["""{"type":"reset","topicId":2,"epoch":"new","reason":"epochChanged","requestedFrom":6,"requestedEpoch":"old","firstMessageId":1,"lastMessageId":2}"""],
            [Message(2, "new", 1, "new one"), Message(2, "new", 2, "new two")]);
        var events = await reader.TakeAsync(3);
        _ = reader.PendingStep;
        var next = await handler.NextPollAsync();

        Assert.Equal("2:6~old", poll.Topics);
        var reset = Assert.IsType<ResetNotice>(events[0]);
        Assert.True(reset.EpochChanged);
        Assert.Equal(("new", "old", 6L, 1L, 2L), (reset.Epoch, reset.RequestedEpoch, reset.RequestedFrom, reset.FirstMessageId, reset.LastMessageId));
        Assert.Contains("asked for epoch old from 6, the topic is now epoch new", reset.ToString());
        Assert.Equal(["new one", "new two"], events.Skip(1).Select(e => e.Text()));
        Assert.Equal("2:3~new", next.Topics);
    }

    [Fact]
    public async Task AResetBeyondTheEndIsNotAnEpochChange()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options(PollFormat.Json));
        await using var reader = new EventReader(client.Subscribe([new(2, 40)]));
        _ = reader.PendingStep;

        Respond(await handler.NextPollAsync(), PollFormat.Json,
            ["""{"type":"reset","topicId":2,"epoch":"e1","reason":"beyondEnd","requestedFrom":40,"firstMessageId":1,"lastMessageId":0}"""], []);
        var reset = Assert.IsType<ResetNotice>(await reader.NextAsync());
        _ = reader.PendingStep;
        var next = await handler.NextPollAsync();

        Assert.False(reset.EpochChanged);
        Assert.Null(reset.RequestedEpoch);
        Assert.Equal("e1", reset.Epoch);
        Assert.Equal("2:1~e1", next.Topics);
    }

    [Fact]
    public async Task WithoutEpochsFromTheServerTheQueryAndTheCursorsStayAsBefore()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options(PollFormat.Json));
        await using var reader = new EventReader(client.Subscribe([new(14, 1), new(15, 3)]));
        _ = reader.PendingStep;

        var first = await handler.NextPollAsync();
        Respond(first, PollFormat.Json,
            ["""{"type":"gap","topicId":15,"fromMessageId":3,"toMessageId":4}"""],
            [Message(14, null, 1, "one")]);
        var events = await reader.TakeAsync(2);
        _ = reader.PendingStep;
        var second = await handler.NextPollAsync();

        Assert.Equal("topics=14:1,15:3&timeout=10", first.Uri.Query.TrimStart('?'));
        Assert.All(events, e => Assert.Null(e.Epoch));
        Assert.Equal("14:2,15:5", second.Topics);
        Assert.Equal(new Dictionary<long, TopicCursor> { [14] = new(2), [15] = new(5) }, reader.Subscription.Cursors);
    }

    [Fact]
    public async Task AddingATopicFromItsNextMessagePinsTheEpochOfTheTopicInfo()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options());
        await using var subscription = client.Subscribe();

        var adding = subscription.AddAsync(7);
        var info = await handler.NextAsync();
        info.RespondJson(HttpStatusCode.OK, """{"topicId":7,"epoch":"abc-_9","createdAt":"2026-01-01T00:00:00Z","lastMessageId":41,"firstRetainedMessageId":30,"retainedMessages":12,"retainedBytes":100,"waitingPolls":0}""");
        await adding.WaitAsync(TestSupport.Timeout);
        subscription.Add(7, 50);
        var moved = subscription.Cursors[7];
        subscription.Add(7, 60, "other");

        Assert.Equal(HttpMethod.Get, info.Method);
        Assert.Equal(new TopicCursor(50, "abc-_9"), moved);
        Assert.Equal(new TopicCursor(60, "other"), subscription.Cursors[7]);
    }

    [Fact]
    public async Task CreationTopicInfoAndPublishAnswersCarryTheEpoch()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options());

        var creating = client.CreateTopicWithEpochAsync();
        (await handler.NextAsync()).RespondJson(HttpStatusCode.Created, """{"topicId":14,"epoch":"9f3c0a1b2c3d4e5f"}""");
        var created = await creating.WaitAsync(TestSupport.Timeout);
        var publishing = client.PublishAsync(14, "hi");
        (await handler.NextAsync()).RespondJson(HttpStatusCode.Created, """{"topicId":14,"messageId":43,"epoch":"9f3c0a1b2c3d4e5f"}""");
        var published = await publishing.WaitAsync(TestSupport.Timeout);
        var listing = client.ListTopicsAsync();
        (await handler.NextAsync()).RespondJson(HttpStatusCode.OK, """{"topics":[{"topicId":14,"epoch":"9f3c0a1b2c3d4e5f","createdAt":"2026-01-01T00:00:00Z","lastMessageId":43,"firstRetainedMessageId":1,"retainedMessages":43,"retainedBytes":86,"waitingPolls":0}]}""");
        var page = await listing.WaitAsync(TestSupport.Timeout);

        Assert.Equal(new CreatedTopic(14) { Epoch = "9f3c0a1b2c3d4e5f" }, created);
        Assert.Equal(new PublishedMessage(14, 43) { Epoch = "9f3c0a1b2c3d4e5f" }, published);
        Assert.Equal("9f3c0a1b2c3d4e5f", Assert.Single(page.Topics).Epoch);
    }

    [Fact]
    public async Task AConditionalPublishSendsIfMatchAndA412ThrowsEpochMismatchWithoutARetry()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options());

        var publishing = client.PublishAsync(14, "to the old topic", "text/plain", new PublishOptions { ExpectedEpoch = "old" });
        var request = await handler.NextAsync();
        request.RespondJson(HttpStatusCode.PreconditionFailed,
            """{"title":"Epoch mismatch","status":412,"detail":"Topic 14 has epoch new.","epoch":"new"}""", "application/problem+json");
        var error = await Assert.ThrowsAsync<EpochMismatchException>(() => publishing.WaitAsync(TestSupport.Timeout));
        var later = client.PublishAsync(14, "next");
        var next = await handler.NextAsync();
        var nextBody = await next.BodyAsync();
        next.RespondJson(HttpStatusCode.Created, """{"topicId":14,"messageId":1,"epoch":"new"}""");
        await later.WaitAsync(TestSupport.Timeout);

        Assert.Equal("\"old\"", Assert.Single(request.Headers.IfMatch).ToString());
        Assert.Equal((HttpStatusCode.PreconditionFailed, 14L, "old", "new"), (error.StatusCode, error.TopicId, error.ExpectedEpoch, error.CurrentEpoch));
        Assert.Contains("Topic 14 is no longer the topic with epoch old: its epoch is now new", error.Message);
        Assert.Contains("Nothing was published", error.Message);
        Assert.IsAssignableFrom<LaharsubException>(error);
        // The next request is the caller's next publish, not a retry of the refused one; it has no condition.
        Assert.Empty(next.Headers.IfMatch);
        Assert.Equal("next", nextBody);
    }

    [Fact]
    public async Task AnEpochThatIsNotOneIsAMalformedAnswer()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [Api], TestSupport.Options(PollFormat.Json));
        await using var subscription = client.Subscribe([new(14, 1)]);
        var retries = System.Threading.Channels.Channel.CreateUnbounded<Exception>();
        subscription.Retrying += (_, retry) => retries.Writer.TryWrite(retry.Error);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;

        var poll = await handler.NextPollAsync();
        Respond(poll, PollFormat.Json, [], [Message(14, "a,b&c", 1, "x")]);
        var error = await retries.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        var again = await handler.NextPollAsync();
        var gettingTopic = client.GetTopicAsync(14);
        (await handler.NextAsync()).RespondJson(HttpStatusCode.OK, """{"topicId":14,"epoch":"x y","createdAt":"2026-01-01T00:00:00Z","lastMessageId":0,"firstRetainedMessageId":1,"retainedMessages":0,"retainedBytes":0,"waitingPolls":0}""");

        Assert.IsType<InvalidDataException>(error);
        Assert.Contains("'a,b&c'", error.Message);
        Assert.Equal("14:1", again.Topics);
        await Assert.ThrowsAsync<InvalidDataException>(() => gettingTopic.WaitAsync(TestSupport.Timeout));
    }

    private const string Boundary = "b0undary";

    internal static string Message(long topicId, string? epoch, long messageId, string text) =>
        $$"""{"topicId":{{topicId}},{{(epoch is null ? "" : $"\"epoch\":\"{epoch}\",")}}"messageId":{{messageId}},"publishedAt":"2026-11-22T09:30:01.500Z","contentType":"text/plain","encoding":"text","body":"{{text}}"}""";

    /// <summary>Answers a poll with the notices and messages (JSON objects as the JSON format has them) in the requested format.</summary>
    internal static void Respond(ScriptedRequest poll, PollFormat format, string[] notices, string[] messages)
    {
        if (format == PollFormat.Json)
        {
            poll.RespondJson(HttpStatusCode.OK, $$"""{"notices":[{{string.Join(',', notices)}}],"messages":[{{string.Join(',', messages)}}]}""");
            return;
        }
        var body = new System.Text.StringBuilder();
        foreach (var notice in notices)
        {
            using var parsed = JsonDocument.Parse(notice);
            var epoch = parsed.RootElement.TryGetProperty("epoch", out var e) ? $"Laharsub-Epoch: {e.GetString()}\r\n" : "";
            body.Append($"--{Boundary}\r\nContent-Type: application/json\r\nLaharsub-Notice: {parsed.RootElement.GetProperty("type").GetString()}\r\n{epoch}\r\n{notice}\r\n");
        }
        foreach (var message in messages)
        {
            using var parsed = JsonDocument.Parse(message);
            var root = parsed.RootElement;
            var epoch = root.TryGetProperty("epoch", out var e) ? $"Laharsub-Epoch: {e.GetString()}\r\n" : "";
            body.Append($"--{Boundary}\r\nContent-Type: {root.GetProperty("contentType").GetString()}\r\nLaharsub-Topic-Id: {root.GetProperty("topicId")}\r\n{epoch}Laharsub-Message-Id: {root.GetProperty("messageId")}\r\nLaharsub-Published-At: {root.GetProperty("publishedAt").GetString()}\r\n\r\n{root.GetProperty("body").GetString()}\r\n");
        }
        body.Append($"--{Boundary}--\r\n");
        poll.RespondMultipart(Boundary, body.ToString());
    }
}
