using System.Collections.Concurrent;
using System.Text.Json;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// Two server processes on a private Redis; the instance the publishers use is killed (SIGKILL) while
/// several publishes are in flight. With idempotency keys (the client's default) a publish whose outcome
/// the kill made unknown is sent again, with the same key, to the other instance: every acknowledged
/// publish is then stored exactly once, and none is lost.
/// </summary>
public sealed class ExactlyOncePublishTests
{
    [Fact]
    public async Task WhenTheInstancePublishedToIsKilledMidPublishEveryAcknowledgedPublishIsStoredExactlyOnce()
    {
        await using var redis = await RedisServer.StartAsync();
        var hosts = await Task.WhenAll(Enumerable.Range(0, 2).Select(_ => HostProcess.StartAsync(
            $"Laharsub:Redis:Configuration={redis.Configuration}", "Laharsub:Demo:Enabled=false", "Logging:LogLevel:Default=Warning")))
            .WaitAsync(TimeSpan.FromSeconds(90));
        try
        {
            var options = TestSupport.Options(PollFormat.Json);
            options.MaxRequestAttempts = 20;
            await using var publisher = new LaharsubClient(hosts.Select(h => h.ApiAddress), options);
            var topics = new List<long>();
            for (var i = 0; i < 3; i++)
            {
                topics.Add(await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout));
            }
            var acknowledged = new ConcurrentDictionary<string, (long TopicId, long MessageId)>();
            using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(90));
            // Four publishers at once, so that publishes are in flight at the kill; every fourth one goes to all topics.
            var publishing = Enumerable.Range(0, 4).Select(p => Task.Run(async () =>
            {
                for (var n = 0; n < 60; n++)
                {
                    var text = $"{p}/{n}";
                    if (n % 4 == 3)
                    {
                        foreach (var message in await publisher.PublishManyAsync(topics, text, stop.Token))
                        {
                            Assert.True(acknowledged.TryAdd($"{message.TopicId}:{text}", (message.TopicId, message.MessageId)));
                        }
                    }
                    else
                    {
                        var topic = topics[(p + n) % topics.Count];
                        var message = await publisher.PublishAsync(topic, text, stop.Token);
                        Assert.True(acknowledged.TryAdd($"{topic}:{text}", (topic, message.MessageId)));
                    }
                }
            })).ToArray();

            await Eventually.HoldsAsync(() => Task.FromResult(acknowledged.Count >= 40), TimeSpan.FromSeconds(60), "40 publishes acknowledged before the kill");
            Assert.Equal(hosts[0].ApiAddress, publisher.ApiAddress);
            await hosts[0].KillAsync();
            await Task.WhenAll(publishing).WaitAsync(TimeSpan.FromSeconds(90));

            // Read every topic back from the instance that stayed: no gap, no duplicate, nothing unacknowledged.
            using var http = new HttpClient { BaseAddress = hosts[1].ApiAddress, Timeout = TestSupport.Timeout };
            var stored = new Dictionary<string, (long TopicId, long MessageId)>();
            using var answer = JsonDocument.Parse(await http.GetStringAsync($"subscriptions?topics={string.Join(",", topics.Select(t => $"{t}:1"))}&timeout=0"));
            foreach (var message in answer.RootElement.GetProperty("messages").EnumerateArray())
            {
                var topic = message.GetProperty("topicId").GetInt64();
                var key = $"{topic}:{message.GetProperty("body").GetString()}";
                Assert.True(stored.TryAdd(key, (topic, message.GetProperty("messageId").GetInt64())), $"{key} was stored twice");
            }
            foreach (var topic in topics)
            {
                var ids = stored.Values.Where(s => s.TopicId == topic).Select(s => s.MessageId).Order().ToArray();
                Assert.Equal(Enumerable.Range(1, ids.Length).Select(i => (long)i), ids);
            }
            Assert.Equal(4 * (45 + 15 * 3), acknowledged.Count);
            Assert.Equal(acknowledged.OrderBy(a => a.Key), stored.OrderBy(s => s.Key));
            Assert.NotEqual(hosts[0].ApiAddress, publisher.ApiAddress);
        }
        finally
        {
            await Task.WhenAll(hosts.Select(h => h.DisposeAsync().AsTask()));
        }
    }
}
