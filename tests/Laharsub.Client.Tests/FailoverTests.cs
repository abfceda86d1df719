using System.Net;
using System.Threading.Channels;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>A client given several instances of one service moves on when the one it uses cannot be reached.</summary>
public sealed class FailoverTests
{
    private static readonly Uri A = new("http://a.test/ps/");
    private static readonly Uri B = new("http://b.test/ps/");
    private static readonly Uri C = new("http://c.test/ps/");

    [Fact]
    public async Task ASubscriptionMovesToTheNextAddressWhenConnectionsAreRefusedAndCarriesOnFromItsCursors()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [A, B], TestSupport.Options(PollFormat.Json));
        await using var subscription = client.Subscribe(new Dictionary<long, TopicCursor> { [14] = new(1, "e1") });
        var retries = Channel.CreateUnbounded<(Exception Error, TimeSpan Delay)>();
        subscription.Retrying += (_, retry) => retries.Writer.TryWrite((retry.Error, retry.Delay));
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;

        var onA = await handler.NextPollAsync();
        EpochTests.Respond(onA, PollFormat.Json, [], [EpochTests.Message(14, "e1", 1, "from a")]);
        Assert.Equal("from a", (await reader.NextAsync()).Text());
        _ = reader.PendingStep;
        var cut = await handler.NextPollAsync();
        cut.Fail(new HttpRequestException(HttpRequestError.ResponseEnded, "The instance died while the poll waited (scripted)"));
        var onB = await handler.NextPollAsync();
        EpochTests.Respond(onB, PollFormat.Json, [], [EpochTests.Message(14, "e1", 2, "from b")]);
        var message = await reader.NextAsync();
        var retry = await retries.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Equal([A.AbsoluteUri, A.AbsoluteUri, B.AbsoluteUri], new[] { onA, cut, onB }.Select(r => r.Root));
        Assert.Equal("14:2~e1", cut.Topics);
        Assert.Equal("14:2~e1", onB.Topics);
        Assert.Equal("from b", message.Text());
        Assert.IsType<HttpRequestException>(retry.Error);
        Assert.Equal(TimeSpan.Zero, retry.Delay);
        Assert.Equal(B, client.ApiAddress);
    }

    [Theory]
    [InlineData(HttpStatusCode.BadGateway)]
    [InlineData(HttpStatusCode.ServiceUnavailable)]
    [InlineData(HttpStatusCode.GatewayTimeout)]
    public async Task APollAnsweredAsUnavailableMovesOnAtOnceWhateverItsRetryAfter(HttpStatusCode status)
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [A, B], TestSupport.Options());
        await using var reader = new EventReader(client.Subscribe([new(3, 1)]));
        _ = reader.PendingStep;

        var onA = await handler.NextPollAsync();
        onA.RespondJson(status, """{"title":"Unavailable","status":503}""", "application/problem+json",
            response => response.Headers.RetryAfter = new System.Net.Http.Headers.RetryConditionHeaderValue(TimeSpan.FromHours(1)));
        var onB = await handler.NextPollAsync();

        Assert.Equal((A.AbsoluteUri, B.AbsoluteUri), (onA.Root, onB.Root));
        Assert.Equal("3:1", onB.Topics);
    }

    [Fact]
    public async Task AnInternalServerErrorIsRetriedOnTheSameAddress()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [A, B], TestSupport.Options());
        await using var reader = new EventReader(client.Subscribe([new(3, 1)]));
        _ = reader.PendingStep;

        (await handler.NextPollAsync()).RespondJson(HttpStatusCode.InternalServerError, """{"title":"Bug","status":500}""", "application/problem+json");
        var retried = await handler.NextPollAsync();

        // A bug answers the same everywhere: not a reason to leave an instance that is there.
        Assert.Equal(A.AbsoluteUri, retried.Root);
    }

    [Fact]
    public async Task OnceEveryAddressFailedInARowTheSubscriptionBacksOffAndStartsOverAtTheFirst()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [A, B], TestSupport.Options());
        await using var subscription = client.Subscribe([new(3, 1)]);
        var delays = Channel.CreateUnbounded<TimeSpan>();
        subscription.Retrying += (_, retry) => delays.Writer.TryWrite(retry.Delay);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;

        var roots = new List<string>();
        for (var i = 0; i < 3; i++)
        {
            var poll = await handler.NextPollAsync();
            roots.Add(poll.Root);
            poll.Refuse();
        }
        var first = await delays.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        var second = await delays.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        var third = await delays.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);

        Assert.Equal([A.AbsoluteUri, B.AbsoluteUri, A.AbsoluteUri], roots);
        Assert.Equal(TimeSpan.Zero, first);
        // Random below the ceiling (full jitter), so only "not at once, not above the ceiling" is certain.
        Assert.InRange(second, TimeSpan.FromTicks(1), TestSupport.Options().RetryDelay);
        Assert.InRange(third, TimeSpan.FromTicks(1), TestSupport.Options().MaxRetryDelay);
    }

    [Fact]
    public async Task APublishRefusedAtOneAddressGoesToTheNextAndLaterRequestsStayThere()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [A, B, C], TestSupport.Options());

        var publishing = client.PublishAsync(14, "hello");
        var refused = await handler.NextAsync();
        refused.Refuse();
        var accepted = await handler.NextAsync();
        accepted.RespondJson(HttpStatusCode.Created, """{"topicId":14,"messageId":1}""");
        await publishing.WaitAsync(TestSupport.Timeout);
        var getting = client.GetTopicAsync(14);
        var info = await handler.NextAsync();
        info.Respond(HttpStatusCode.NotFound);
        await Assert.ThrowsAsync<LaharsubException>(() => getting.WaitAsync(TestSupport.Timeout));

        Assert.Equal([A.AbsoluteUri, B.AbsoluteUri, B.AbsoluteUri], new[] { refused, accepted, info }.Select(r => r.Root));
        Assert.Equal(B, client.ApiAddress);
        Assert.Equal([A, B, C], client.ApiAddresses);
    }

    [Fact]
    public async Task AKeyedPublishCutOffMidwayIsSentAgainToTheNextAddressWithTheSameKey()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [A, B], TestSupport.Options());

        var publishing = client.PublishAsync(14, "maybe stored");
        var first = await handler.NextAsync();
        var key = first.Headers.GetValues("Idempotency-Key").Single();
        first.Fail(new HttpRequestException(HttpRequestError.ResponseEnded, "Connection reset (scripted)"));
        var again = await handler.NextAsync();
        again.RespondJson(HttpStatusCode.Created, """{"topicId":14,"messageId":1}""");
        var published = await publishing.WaitAsync(TestSupport.Timeout);

        Assert.Equal((A.AbsoluteUri, B.AbsoluteUri), (first.Root, again.Root));
        Assert.Equal(key, again.Headers.GetValues("Idempotency-Key").Single());
        Assert.Equal(1, published.MessageId);
    }

    [Fact]
    public async Task APublishWithoutAKeyCutOffMidwayIsNotRetriedButTheNextRequestGoesToTheNextAddress()
    {
        var handler = new ScriptedHandler();
        var options = TestSupport.Options();
        options.IdempotentPublishes = false;
        await using var client = new LaharsubClient(handler.CreateClient(), [A, B], options);

        var publishing = client.PublishAsync(14, "maybe stored");
        (await handler.NextAsync()).Fail(new HttpRequestException(HttpRequestError.ResponseEnded, "Connection reset (scripted)"));
        // The message may be stored already: only the caller can decide to publish it again.
        await Assert.ThrowsAsync<HttpRequestException>(() => publishing.WaitAsync(TestSupport.Timeout));
        var next = client.PublishAsync(14, "next");
        var request = await handler.NextAsync();
        request.RespondJson(HttpStatusCode.Created, """{"topicId":14,"messageId":2}""");
        await next.WaitAsync(TestSupport.Timeout);

        Assert.Equal(B.AbsoluteUri, request.Root);
    }

    [Fact]
    public async Task RequestsFailingTogetherAtOneAddressMoveOnByOneAddressNotOneEach()
    {
        var handler = new ScriptedHandler();
        await using var client = new LaharsubClient(handler.CreateClient(), [A, B, C], TestSupport.Options());

        var first = client.GetTopicAsync(1);
        var second = client.GetTopicAsync(2);
        var pending = new[] { await handler.NextAsync(), await handler.NextAsync() };
        Assert.All(pending, r => Assert.Equal(A.AbsoluteUri, r.Root));
        pending[0].Refuse();
        pending[1].Refuse();
        var retries = new[] { await handler.NextAsync(), await handler.NextAsync() };
        foreach (var retry in retries)
        {
            retry.Respond(HttpStatusCode.NotFound);
        }
        await Assert.ThrowsAsync<LaharsubException>(() => first.WaitAsync(TestSupport.Timeout));
        await Assert.ThrowsAsync<LaharsubException>(() => second.WaitAsync(TestSupport.Timeout));

        Assert.All(retries, r => Assert.Equal(B.AbsoluteUri, r.Root));
    }

    [Fact]
    public async Task WhenTheInstanceInUseStopsASubscriptionAndAPublisherCarryOnAtAnotherWithEveryMessageOnce()
    {
        // Two instances in front of one store (and its wake-ups), as with several processes on one Redis.
        await using var first = await LaharsubTestServer.StartAsync();
        await using var second = await LaharsubTestServer.StartAsync(services: LaharsubTestServer.KeepData(first));
        var options = TestSupport.Options();
        options.MaxRequestAttempts = 10;
        await using var client = new LaharsubClient([first.ApiAddress, second.ApiAddress], options);
        var topic = await client.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe(new Dictionary<long, TopicCursor> { [topic.TopicId] = new(1, topic.Epoch) }));
        var received = new List<string>();
        for (var i = 1; i <= 5; i++)
        {
            await client.PublishAsync(topic.TopicId, $"m{i}").WaitAsync(TestSupport.Timeout);
        }
        while (received.Count < 5)
        {
            received.Add((await reader.NextAsync()).Text());
        }
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(() => Task.FromResult(first.WaitingPolls(topic.TopicId) == 1), TestSupport.Timeout, "the poll waits on the first instance");

        await first.StopAsync();
        for (var i = 6; i <= 10; i++)
        {
            await client.PublishAsync(topic.TopicId, $"m{i}").WaitAsync(TestSupport.Timeout);
        }
        while (received.Count < 10)
        {
            received.Add((await reader.NextAsync()).Text());
        }

        Assert.Equal(Enumerable.Range(1, 10).Select(i => $"m{i}"), received);
        Assert.Equal(second.ApiAddress, client.ApiAddress);
        Assert.Equal(new TopicCursor(11, topic.Epoch), reader.Subscription.Cursors[topic.TopicId]);
        await reader.AssertQuietForAsync(TimeSpan.FromMilliseconds(300));
    }
}
