using System.Net;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests;

public sealed class PollTests
{
    [Fact]
    public async Task APollOverSeveralTopicsWakesOnAnyOneOfThem()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topics = new[] { await client.CreateTopicAsync(), await client.CreateTopicAsync(), await client.CreateTopicAsync() };

        var poll = client.PollAsync($"topics={string.Join(',', topics)}&timeout=30");
        await WaitForWaitersAsync(client, topics[2], 1);
        await client.PublishTextAsync(topics[2], "third");
        var response = await poll;

        Assert.Equal(HttpStatusCode.OK, response.Status);
        var message = Assert.Single(response.Messages);
        Assert.Equal((topics[2], 1L, "third"), (message.TopicId, message.MessageId, message.Text));
        foreach (var topic in topics)
        {
            await WaitForWaitersAsync(client, topic, 0);
        }
    }

    [Fact]
    public async Task MessagesAlreadyPublishedFromTheCursorOnComeBackAtOnceAcrossTopics()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        for (var i = 1; i <= 3; i++)
        {
            await client.PublishTextAsync(a, $"a{i}");
            await client.PublishTextAsync(b, $"b{i}");
        }

        var response = await client.PollAsync($"subs[0][topicid]={a}&subs[0][from]=2&subs[1][topicid]={b}&subs[1][from]=3&timeout=30");

        Assert.Equal(["a2", "a3", "b3"], response.Messages.Select(m => m.Text));
        Assert.Empty(response.Notices);
    }

    [Fact]
    public async Task JQueryEncodedBracketsAndAnyCaseAreAccepted()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "x");

        var response = await client.PollAsync($"subs%5B0%5D%5BtopicId%5D={topic}&SUBS%5B0%5D%5BFROM%5D=1&_=1700000000");

        Assert.Equal("x", Assert.Single(response.Messages).Text);
    }

    [Fact]
    public async Task NothingBeforeTheTimeoutAnswers204WithNoStore()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        // Longer than the client's bound: only the server's clock can end it in time.
        var poll = client.PollAsync($"topics={topic}&timeout=60");
        await WaitForWaitersAsync(client, topic, 1);
        clock.Advance(TimeSpan.FromMilliseconds(59_999));
        Assert.False(poll.IsCompleted, "the poll must wait for its whole timeout");
        Assert.Equal(1, server.WaitingPolls(topic));
        clock.Advance(TimeSpan.FromMilliseconds(1));
        var response = await poll;

        Assert.Equal(HttpStatusCode.NoContent, response.Status);
        Assert.True(response.Response.Headers.CacheControl!.NoStore);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(9)]
    public async Task EachPollWaitsItsOwnTimeoutAfterAnEarlierOneTimedOut(int topicCount)
    {
        // The server reuses a finished poll's state and timer for the next poll of as many topics, up to 8
        // (SubscriptionRunner's pool); a poll of 9 gets a state of its own, disposed after it.
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock));
        using var client = server.CreateClient();
        var topics = new List<long>();
        for (var i = 0; i < topicCount; i++)
        {
            topics.Add(await client.CreateTopicAsync());
        }
        var list = string.Join(',', topics);

        var first = client.PollAsync($"topics={list}&timeout=10");
        await WaitForWaitersAsync(client, topics[^1], 1);
        clock.Advance(TimeSpan.FromSeconds(10));
        Assert.Equal(HttpStatusCode.NoContent, (await first).Status);
        // The first poll's waiters may outlive its answer by a moment: counted now, they would let the second
        // poll's count below pass before it waits, and the publish below reach it before it took its position.
        await WaitForWaitersAsync(client, topics[^1], 0);

        var second = client.PollAsync($"topics={list}&timeout=30");
        await WaitForWaitersAsync(client, topics[^1], 1);
        clock.Advance(TimeSpan.FromSeconds(29));
        Assert.False(second.IsCompleted, "the second poll must wait for its own 30 s, not the first poll's 10");
        await client.PublishTextAsync(topics[^1], "y");
        var answered = await second;

        Assert.Equal("y", Assert.Single(answered.Messages).Text);
    }

    [Fact]
    public async Task APollWithoutTimeoutWaitsTheConfiguredDefault()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(o => o.DefaultPollTimeout = TimeSpan.FromSeconds(45),
            s => s.AddSingleton<TimeProvider>(clock));
        using var client = server.CreateClient(TimeSpan.FromSeconds(20));
        var topic = await client.CreateTopicAsync();

        var poll = client.PollAsync($"topics={topic}");
        await WaitForWaitersAsync(client, topic, 1);
        clock.Advance(TimeSpan.FromSeconds(44));
        Assert.False(poll.IsCompleted, "the poll must wait for the whole default timeout");
        Assert.Equal(1, server.WaitingPolls(topic));
        clock.Advance(TimeSpan.FromSeconds(1));
        var response = await poll;

        Assert.Equal(HttpStatusCode.NoContent, response.Status);
    }

    [Fact]
    public async Task EveryPollAnswerIsMarkedNoStore()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "x");

        var ok = await client.PollAsync($"topics={topic}:1");
        var bad = await client.PollAsync("topics=oops");

        Assert.True(ok.Response.Headers.CacheControl!.NoStore);
        Assert.True(bad.Response.Headers.CacheControl!.NoStore);
    }

    [Fact]
    public async Task WithoutFromAPollStartsWithTheNextMessagePublished()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "old");

        var poll = client.PollAsync($"topics={topic}&timeout=30");
        await WaitForWaitersAsync(client, topic, 1);
        await client.PublishTextAsync(topic, "new");
        var response = await poll;

        var message = Assert.Single(response.Messages);
        Assert.Equal((2L, "new"), (message.MessageId, message.Text));
    }

    [Fact]
    public async Task FromOneAsksForEverythingStillRetained()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        for (var i = 0; i < 5; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }

        var response = await client.PollAsync($"topics={topic}:1");

        Assert.Equal([1L, 2, 3, 4, 5], response.Messages.Select(m => m.MessageId));
    }

    [Fact]
    public async Task APollWaitingForLaterMessagesIsWokenByThem()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "seen");

        var poll = client.PollAsync($"topics={topic}:2&timeout=30", "multipart/mixed");
        await WaitForWaitersAsync(client, topic, 1);
        await client.PublishTextAsync(topic, "fresh");

        var message = Assert.Single((await poll).Messages);
        Assert.Equal((2L, "fresh"), (message.MessageId, message.Text));
    }

    [Fact]
    public async Task AResponseIsCappedInCountAndTheClientContinuesFromItsCursor()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerPoll = 3);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        for (var i = 0; i < 7; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }

        var received = new List<long>();
        long cursor = 1;
        while (received.Count < 7)
        {
            var response = await client.PollAsync($"topics={topic}:{cursor}&timeout=0");
            Assert.InRange(response.Messages.Count, 1, 3);
            received.AddRange(response.Messages.Select(m => m.MessageId));
            cursor = received[^1] + 1;
        }

        Assert.Equal(Enumerable.Range(1, 7).Select(i => (long)i), received);
    }

    [Fact]
    public async Task AResponseIsCappedInBytesButAlwaysCarriesOneMessage()
    {
        // The cap counts answer bytes: a 100-byte binary body is about 290 bytes of JSON (base64 plus fields), so two fit in 700.
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxBytesPerPoll = 700; o.MaxMessageBytes = 1000; });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishAsync(topic, new byte[1000]);
        await client.PublishAsync(topic, new byte[100]);
        await client.PublishAsync(topic, new byte[100]);
        await client.PublishAsync(topic, new byte[100]);

        var first = await client.PollAsync($"topics={topic}:1");
        var second = await client.PollAsync($"topics={topic}:2");

        Assert.Equal([1L], first.Messages.Select(m => m.MessageId));
        Assert.Equal([2L, 3], second.Messages.Select(m => m.MessageId));
    }

    [Fact]
    public async Task ACappedResponseGivesEachTopicItsShareBeforeABusyTopicTakesTheRest()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerPoll = 6);
        using var client = server.CreateClient();
        var busy = await client.CreateTopicAsync();
        var quiet = await client.CreateTopicAsync();
        for (var i = 0; i < 10; i++)
        {
            await client.PublishTextAsync(busy, $"busy {i}");
        }
        await client.PublishTextAsync(quiet, "quiet 0");

        var response = await client.PollAsync($"topics={busy}:1,{quiet}:1&timeout=0");

        // Shares of 3 each; the quiet topic leaves 2 of its share, which the busy topic then takes.
        Assert.Equal(6, response.Messages.Count);
        Assert.Equal([1L], response.Messages.Where(m => m.TopicId == quiet).Select(m => m.MessageId));
        Assert.Equal([1L, 2, 3, 4, 5], response.Messages.Where(m => m.TopicId == busy).Select(m => m.MessageId));
        AssertGroupedByTopic(response.Messages);
    }

    [Fact]
    public async Task ACappedResponseInBytesGivesEachTopicItsShare()
    {
        // A 40-byte binary body is about 210 bytes of JSON: each topic's share of 450 holds one.
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxBytesPerPoll = 450);
        using var client = server.CreateClient();
        var busy = await client.CreateTopicAsync();
        var quiet = await client.CreateTopicAsync();
        for (var i = 0; i < 5; i++)
        {
            await client.PublishAsync(busy, new byte[40]);
        }
        await client.PublishAsync(quiet, new byte[40]);

        var response = await client.PollAsync($"topics={busy}:1,{quiet}:1&timeout=0");

        // Before fair shares, the busy topic's first two messages filled the response and the quiet one waited.
        Assert.Equal([(busy, 1L), (quiet, 1L)], response.Messages.Select(m => (m.TopicId, m.MessageId)).Order());
    }

    [Fact]
    public async Task WhenEvenTheSharesDoNotFitEveryTopicIsServedWithinAsManyPollsAsTopics()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerPoll = 2);
        using var client = server.CreateClient();
        var topics = new[] { await client.CreateTopicAsync(), await client.CreateTopicAsync(), await client.CreateTopicAsync() };
        foreach (var topic in topics)
        {
            for (var i = 0; i < 5; i++)
            {
                await client.PublishTextAsync(topic, $"m{i}");
            }
        }

        // Three busy topics, room for two messages: the topic that goes first rotates, so each topic is
        // served in three consecutive polls although every one of them stays busy throughout.
        var cursors = topics.ToDictionary(topic => topic, _ => 1L);
        for (var poll = 0; poll < topics.Length; poll++)
        {
            var response = await client.PollAsync("topics=" + string.Join(',', topics.Select(t => $"{t}:{cursors[t]}")) + "&timeout=0");
            Assert.Equal(2, response.Messages.Count);
            foreach (var message in response.Messages)
            {
                Assert.Equal(cursors[message.TopicId], message.MessageId);
                cursors[message.TopicId] = message.MessageId + 1;
            }
        }

        Assert.All(topics, topic => Assert.True(cursors[topic] > 1, $"topic {topic} got nothing in {topics.Length} polls"));
    }

    [Fact]
    public async Task WhenTheSharesDoNotFitEachGapIsStillReportedOnceAndInSubscriptionOrder()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxMessagesPerPoll = 2; o.MaxMessagesPerTopic = 3; });
        using var client = server.CreateClient();
        var topics = new[] { await client.CreateTopicAsync(), await client.CreateTopicAsync(), await client.CreateTopicAsync() };
        foreach (var topic in topics)
        {
            for (var i = 0; i < 5; i++)
            {
                await client.PublishTextAsync(topic, $"m{i}");
            }
        }

        // Messages 1 and 2 of every topic were evicted; the gathering starts over from a rotated topic
        // because three busy topics do not fit in two messages, and must not lose or repeat a notice.
        var response = await client.PollAsync("topics=" + string.Join(',', topics.Select(t => $"{t}:1")) + "&timeout=0");

        Assert.Equal(topics.Select(t => ("gap", t, 1L, 2L)), response.Notices.Select(n => (n.Type, n.TopicId, n.Get("fromMessageId"), n.Get("toMessageId"))));
        Assert.Equal(2, response.Messages.Count);
        Assert.All(response.Messages, m => Assert.Equal(3, m.MessageId));
        Assert.Equal(response.Messages.Select(m => m.TopicId).Order(), response.Messages.Select(m => m.TopicId));
    }

    private static void AssertGroupedByTopic(IReadOnlyList<ReceivedMessage> messages)
    {
        var seen = new HashSet<long>();
        for (var i = 0; i < messages.Count; i++)
        {
            if (i == 0 || messages[i].TopicId != messages[i - 1].TopicId)
            {
                Assert.True(seen.Add(messages[i].TopicId), $"topic {messages[i].TopicId}'s messages are split in two groups");
            }
        }
    }

    [Fact]
    public async Task DeletingATopicWakesItsWaitingPollsWithATopicDeletedNotice()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var doomed = await client.CreateTopicAsync();
        var other = await client.CreateTopicAsync();

        var poll = client.PollAsync($"topics={doomed},{other}&timeout=60", "multipart/mixed");
        await WaitForWaitersAsync(client, doomed, 1);
        using (await client.DeleteAsync($"topics/{doomed}").WaitAsync(WireClient.Bound)) { }
        var response = await poll;

        Assert.Equal(HttpStatusCode.OK, response.Status);
        var notice = Assert.Single(response.Notices);
        Assert.Equal(("topicDeleted", doomed), (notice.Type, notice.TopicId));
        Assert.Empty(response.Messages);
        await WaitForWaitersAsync(client, other, 0);
    }

    [Fact]
    public async Task ACursorBeyondTheTopicsEndGetsAResetNoticeAndEverythingRetained()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "one");
        await client.PublishTextAsync(topic, "two");

        var response = await client.PollAsync($"topics={topic}:10&timeout=30");

        var notice = Assert.Single(response.Notices);
        Assert.Equal("reset", notice.Type);
        Assert.Equal((10L, 1L, 2L), (notice.Get("requestedFrom"), notice.Get("firstMessageId"), notice.Get("lastMessageId")));
        Assert.Equal(["one", "two"], response.Messages.Select(m => m.Text));
    }

    [Theory]
    [InlineData(9223372036854775807)]
    [InlineData(4294967298)]
    public async Task ACursorFarBeyondTheTopicsEndGetsAResetNoticeNotAnError(long from)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "one");
        await client.PublishTextAsync(topic, "two");
        await client.PublishTextAsync(topic, "three");

        var response = await client.PollAsync($"topics={topic}:{from}&timeout=0");

        Assert.Equal(HttpStatusCode.OK, response.Status);
        var notice = Assert.Single(response.Notices);
        Assert.Equal("reset", notice.Type);
        Assert.Equal(from, notice.Get("requestedFrom"));
        Assert.Equal(["one", "two", "three"], response.Messages.Select(m => m.Text));
    }

    [Fact]
    public async Task AnUnknownTopicInAPollIs404NamingIt()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic},99"));

        Assert.Equal(HttpStatusCode.NotFound, status);
        Assert.Equal(99, problem.GetProperty("topicId").GetInt64());
        Assert.Equal(0, (await client.GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32());
    }

    [Theory]
    [InlineData(null, "application/json")]
    [InlineData("*/*", "application/json")]
    [InlineData("application/json, text/javascript, */*; q=0.01", "application/json")]
    [InlineData("multipart/mixed", "multipart/mixed")]
    [InlineData("application/json;q=0.5, multipart/mixed", "multipart/mixed")]
    [InlineData("multipart/*", "multipart/mixed")]
    public async Task TheFormatFollowsAcceptWithJsonAsTheDefault(string? accept, string expected)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "x");

        var response = await client.PollAsync($"topics={topic}:1", accept);

        Assert.Equal(expected, response.Response.Content.Headers.ContentType!.MediaType);
        Assert.Equal("x", Assert.Single(response.Messages).Text);
    }

    [Fact]
    public async Task AnUnacceptableFormatIs406()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var request = new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&timeout=0");
        request.Headers.Accept.ParseAdd("text/html");

        var (status, problem) = await client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.NotAcceptable, status);
        Assert.Contains("multipart/mixed", problem.GetProperty("detail").GetString());
    }

    public static TheoryData<string> NonsenseAcceptHeaders => new()
    {
        "///",
        "application/json;q=abc",
        "application/json;q=2",
        "application/json;q=",
        new string('\u0021', 10_240),
        string.Concat(Enumerable.Range(0, 1024).Select(i => "a/b;c=\"")),
    };

    [Theory]
    [MemberData(nameof(NonsenseAcceptHeaders))]
    public async Task ANonsenseAcceptIs406(string accept)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var request = new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&timeout=0");
        Assert.True(request.Headers.TryAddWithoutValidation("Accept", accept));

        var (status, problem) = await client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.NotAcceptable, status);
        var detail = problem.GetProperty("detail").GetString()!;
        Assert.Contains("application/json", detail);
        Assert.True(detail.Length < 500, $"the detail repeats the whole header: {detail.Length} characters");
    }

    [Theory]
    [InlineData("application/json;q=0.5, text/html")]
    [InlineData("text/html;q=0.9, */*;q=0.1")]
    [InlineData("application/json; charset=utf-8")]
    public async Task AWellFormedAcceptWithQualitiesStillGetsJson(string accept)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "x");

        var response = await client.PollAsync($"topics={topic}:1", accept);

        Assert.Equal(HttpStatusCode.OK, response.Status);
        Assert.Equal("x", Assert.Single(response.Messages).Text);
    }

    [Fact]
    public async Task APollOverTheMaximumNumberOfTopicsInJQueryFormFitsTheRequestLine()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxTopics = 2000);
        using var client = server.CreateClient();
        var topics = new List<long>();
        for (var i = 0; i < 1000; i++)
        {
            topics.Add(await client.CreateTopicAsync());
        }
        await client.PublishTextAsync(topics[^1], "last");
        // Worst case for the line length: large ids and cursors, brackets percent-encoded as $.param does.
        var query = string.Join('&', topics.Select((t, i) => $"subs%5B{i}%5D%5Btopicid%5D={t}&subs%5B{i}%5D%5Bfrom%5D=1"));

        var response = await client.PollAsync(query + "&timeout=0");

        Assert.Equal(HttpStatusCode.OK, response.Status);
        Assert.Equal("last", Assert.Single(response.Messages).Text);
    }

    [Fact]
    public async Task AnOperatorsOwnRequestLineLimitWinsOverTheRaisedDefault()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Kestrel:Limits:MaxRequestLineSize"] = "300",
        });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        using var shortPoll = await client.GetAsync($"subscriptions?topics={topic}:1&timeout=0").WaitAsync(WireClient.Bound);
        using var longPoll = await client.GetAsync($"subscriptions?topics={topic}:1&timeout=0&_={new string('x', 400)}").WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.NoContent, shortPoll.StatusCode);
        Assert.Equal(HttpStatusCode.RequestUriTooLong, longPoll.StatusCode);
    }

    internal static Task WaitForWaitersAsync(HttpClient client, long topic, int count) =>
        Eventually.HoldsAsync(async () => (await client.GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == count,
            TimeSpan.FromSeconds(20), $"topic {topic} has {count} waiting polls");

    [Fact]
    public async Task TheByteCapCountsTheAnswerNotOnlyTheBodies()
    {
        // 100 control characters are 100 body bytes but 600 bytes of JSON ("\u0001" each).
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxBytesPerPoll = 1000);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        for (var i = 0; i < 5; i++)
        {
            await client.PublishTextAsync(topic, new string('\u0001', 100));
        }

        using var response = await client.GetAsync($"subscriptions?topics={topic}:1").WaitAsync(WireClient.Bound);
        var answer = await response.Content.ReadAsByteArrayAsync();

        var delivered = System.Text.Json.JsonDocument.Parse(answer).RootElement.GetProperty("messages").GetArrayLength();
        Assert.Equal(1, delivered);
        Assert.InRange(answer.Length, 600, 1000);
    }
}
