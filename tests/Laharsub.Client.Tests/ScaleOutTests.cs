using System.Collections.Concurrent;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// Three server processes on one Redis; the instance a subscriber polls is killed (SIGKILL) while
/// messages flow. Given the instances' addresses, the client carries on from its cursors at another
/// one, and every acknowledged message arrives exactly once, in order.
/// </summary>
public sealed class ScaleOutTests
{
    [Fact]
    public async Task WhenTheInstanceBeingPolledIsKilledUnderLoadEveryAcknowledgedMessageArrivesOnceInOrder()
    {
        await using var redis = await RedisServer.StartAsync();
        var hosts = await Task.WhenAll(Enumerable.Range(0, 3).Select(_ => HostProcess.StartAsync(
            $"Laharsub:Redis:Configuration={redis.Configuration}", "Laharsub:Demo:Enabled=false", "Logging:LogLevel:Default=Warning")))
            .WaitAsync(TimeSpan.FromSeconds(90));
        try
        {
            var options = TestSupport.Options(PollFormat.Json);
            options.MaxRequestAttempts = 20;
            await using var subscriber = new LaharsubClient(hosts.Select(h => h.ApiAddress), options);
            // The publisher goes through an instance that stays: every publish it makes is acknowledged.
            await using var publisher = new LaharsubClient([hosts[2].ApiAddress, hosts[1].ApiAddress], options);
            var topics = new List<CreatedTopic>();
            for (var i = 0; i < 3; i++)
            {
                topics.Add(await publisher.CreateTopicWithEpochAsync().WaitAsync(TestSupport.Timeout));
            }
            await using var reader = new EventReader(subscriber.Subscribe(topics.ToDictionary(t => t.TopicId, t => new TopicCursor(1, t.Epoch))));
            var acknowledged = new ConcurrentDictionary<long, ConcurrentQueue<long>>(topics.ToDictionary(t => t.TopicId, _ => new ConcurrentQueue<long>()));
            var published = 0;
            using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(60));
            var publishing = Task.Run(async () =>
            {
                for (var n = 0; n < 300; n++)
                {
                    var topic = topics[n % topics.Count].TopicId;
                    var message = await publisher.PublishAsync(topic, $"{topic}/{n}", stop.Token);
                    acknowledged[topic].Enqueue(message.MessageId);
                    Interlocked.Increment(ref published);
                }
            });
            var received = new Dictionary<long, List<long>>(topics.ToDictionary(t => t.TopicId, _ => new List<long>()));
            async Task ReceiveAsync(Func<bool> until)
            {
                while (!until())
                {
                    var item = await reader.NextAsync(TimeSpan.FromSeconds(30));
                    var message = Assert.IsType<LaharsubMessage>(item);
                    received[message.TopicId].Add(message.MessageId);
                }
            }

            await ReceiveAsync(() => received.Values.Sum(r => r.Count) >= 60);
            Assert.Equal(hosts[0].ApiAddress, subscriber.ApiAddress);
            await hosts[0].KillAsync();
            await publishing.WaitAsync(TimeSpan.FromSeconds(60));
            await ReceiveAsync(() => received.Values.Sum(r => r.Count) >= 300);

            Assert.Equal(300, published);
            foreach (var topic in topics)
            {
                Assert.Equal(acknowledged[topic.TopicId].Order(), received[topic.TopicId]);
            }
            Assert.NotEqual(hosts[0].ApiAddress, subscriber.ApiAddress);
            await reader.AssertQuietForAsync(TimeSpan.FromMilliseconds(300));
        }
        finally
        {
            await Task.WhenAll(hosts.Select(h => h.DisposeAsync().AsTask()));
        }
    }
}
