using System.Collections.Concurrent;
using System.Net;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

public sealed class ConcurrencyTests
{
    [Fact]
    public async Task EverySubscriberGetsEveryMessageExactlyOnceInIdOrderUnderConcurrentPublishers()
    {
        const int Publishers = 8, MessagesEach = 150, Subscribers = 12, Topics = 2;
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxMessagesPerTopic = 10_000; o.MaxMessagesPerPoll = 50; });
        using var client = server.CreateClient(TimeSpan.FromSeconds(60));
        var topics = new long[Topics];
        for (var t = 0; t < Topics; t++)
        {
            topics[t] = await client.CreateTopicAsync();
        }
        var expectedPerTopic = Publishers * MessagesEach / Topics;

        // Subscribers start from id 1 so that none can miss a message published before its first poll.
        var subscribers = Enumerable.Range(0, Subscribers).Select(async s =>
        {
            var received = topics.ToDictionary(t => t, _ => new List<(long Id, string Text)>());
            var cursors = topics.ToDictionary(t => t, _ => 1L);
            var format = s % 2 == 0 ? "application/json" : "multipart/mixed";
            while (received.Values.Any(list => list.Count < expectedPerTopic))
            {
                var query = "topics=" + string.Join(',', topics.Select(t => $"{t}:{cursors[t]}")) + "&timeout=10";
                var response = await client.PollAsync(query, format);
                Assert.True(response.Status is HttpStatusCode.OK or HttpStatusCode.NoContent, $"poll answered {response.Status}");
                Assert.Empty(response.Notices);
                foreach (var message in response.Messages)
                {
                    received[message.TopicId].Add((message.MessageId, message.Text));
                    cursors[message.TopicId] = message.MessageId + 1;
                }
            }
            return received;
        }).ToArray();

        var published = new ConcurrentBag<(long Topic, long Id, string Text)>();
        await Task.WhenAll(Enumerable.Range(0, Publishers).Select(async p =>
        {
            for (var i = 0; i < MessagesEach; i++)
            {
                var topic = topics[(p + i) % Topics];
                var text = $"p{p}-m{i}";
                published.Add((topic, await client.PublishTextAsync(topic, text), text));
            }
        })).WaitAsync(TimeSpan.FromSeconds(120));

        foreach (var result in await Task.WhenAll(subscribers).WaitAsync(TimeSpan.FromSeconds(120)))
        {
            foreach (var topic in topics)
            {
                var expected = published.Where(m => m.Topic == topic).OrderBy(m => m.Id).Select(m => (m.Id, m.Text)).ToList();
                Assert.Equal(Enumerable.Range(1, expectedPerTopic).Select(i => (long)i), expected.Select(m => m.Id));
                Assert.Equal(expected, result[topic]);
            }
        }
    }

    [Fact]
    public async Task ThousandsOfAbortedPollsLeaveNoWaiters()
    {
        const int Polls = 2000;
        // 2,000 pollers that all come from 127.0.0.1: lift the per-client caps, which would refuse half.
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Laharsub:Limits:MaxConnectionsPerClient"] = "0",
            ["Laharsub:Limits:MaxWaitingPollsPerClient"] = "0",
        });
        using var admin = server.CreateClient();
        var topics = new[] { await admin.CreateTopicAsync(), await admin.CreateTopicAsync(), await admin.CreateTopicAsync() };
        using var handler = new SocketsHttpHandler { MaxConnectionsPerServer = Polls + 10 };
        using var pollers = new HttpClient(handler) { BaseAddress = server.ApiAddress, Timeout = TimeSpan.FromSeconds(60) };
        using var abort = new CancellationTokenSource();

        var polls = Enumerable.Range(0, Polls)
            .Select(_ => pollers.GetAsync($"subscriptions?topics={string.Join(',', topics)}&timeout=60", abort.Token))
            .ToArray();
        foreach (var topic in topics)
        {
            await PollTests.WaitForWaitersAsync(admin, topic, Polls);
        }
        abort.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Task.WhenAll(polls).WaitAsync(TimeSpan.FromSeconds(30)));

        foreach (var topic in topics)
        {
            await PollTests.WaitForWaitersAsync(admin, topic, 0);
        }
        var id = await admin.PublishTextAsync(topics[0], "after the storm");
        Assert.Equal(1, id);
    }

    [Fact]
    public async Task ShutdownAnswersWaitingPollsPromptlyAndClosesTheirConnections()
    {
        var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var polls = Enumerable.Range(0, 20).Select(_ => client.PollAsync($"topics={topic}&timeout=120")).ToArray();
        await PollTests.WaitForWaitersAsync(client, topic, polls.Length);

        var stopping = server.DisposeAsync().AsTask();
        var responses = await Task.WhenAll(polls).WaitAsync(TimeSpan.FromSeconds(5));
        await stopping.WaitAsync(TimeSpan.FromSeconds(15));

        Assert.All(responses, response =>
        {
            Assert.Equal(HttpStatusCode.NoContent, response.Status);
            Assert.True(response.Response.Headers.ConnectionClose);
        });
    }
}
