using System.Diagnostics;
using System.Text;
using Laharsub.Testing;
using Xunit.Abstractions;

namespace Laharsub.Client.Tests;

public sealed class FlowTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task ABurstOf10000MessagesArrivesCompleteAndInOrder(PollFormat format)
    {
        const int count = 10_000;
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 2 * count);
        await using var client = server.CreateLaharsubClient(format);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe());
        await reader.Subscription.AddAsync(topic).WaitAsync(TestSupport.Timeout);
        _ = reader.PendingStep;
        await Eventually.HoldsAsync(async () => (await client.GetTopicAsync(topic)).WaitingPolls == 1, TestSupport.Timeout, "the poll waits");

        // Published in-process, far faster than any HTTP publisher: a true burst for the subscriber.
        var stopwatch = Stopwatch.StartNew();
        var publishing = Task.Run(async () =>
        {
            for (var i = 1; i <= count; i++)
            {
                await server.Store.PublishAsync(topic, Encoding.UTF8.GetBytes($"message {i} of the burst"), "text/plain");
            }
        });
        var events = await reader.TakeAsync(count);
        stopwatch.Stop();
        await publishing.WaitAsync(TestSupport.Timeout);

        for (var i = 0; i < count; i++)
        {
            var message = Assert.IsType<LaharsubMessage>(events[i]);
            Assert.Equal(i + 1, message.MessageId);
            Assert.Equal($"message {i + 1} of the burst", message.GetString());
        }
        output.WriteLine($"{format}: {count} messages received in {stopwatch.ElapsedMilliseconds} ms");
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task AddingAndRemovingTopicsWhileMessagesFlowLosesAndDuplicatesNothing(PollFormat format)
    {
        const int perTopic = 300;
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(format);
        long[] topics = [await client.CreateTopicAsync(), await client.CreateTopicAsync(), await client.CreateTopicAsync(), await client.CreateTopicAsync()];
        var (a, b, c, d) = (topics[0], topics[1], topics[2], topics[3]);
        await using var reader = new EventReader(client.Subscribe([new(a, 1)]));

        using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        var publishing = Task.Run(async () =>
        {
            for (var i = 1; i <= perTopic; i++)
            {
                foreach (var topic in topics)
                {
                    await client.PublishAsync(topic, $"{topic}:{i}", stop.Token);
                }
                if (i % 50 == 0)
                {
                    // Pauses let the subscriber catch up, so that some changes hit a waiting poll.
                    await Task.Delay(20, stop.Token);
                }
            }
        });

        var received = topics.ToDictionary(t => t, _ => new List<long>());
        long? cFirst = null;
        long aResumeFrom = 0;
        var read = 0;
        while (received.Values.Sum(ids => ids.Count) < 4 * perTopic - CountBefore(cFirst))
        {
            var message = Assert.IsType<LaharsubMessage>(await reader.NextAsync());
            Assert.Equal($"{message.TopicId}:{message.MessageId}", message.GetString());
            received[message.TopicId].Add(message.MessageId);
            read++;
            switch (read)
            {
                case 20:
                    reader.Subscription.Add(b, 1);
                    break;
                case 60:
                    await reader.Subscription.AddAsync(c).WaitAsync(TestSupport.Timeout);
                    cFirst = reader.Subscription.Cursors[c].From;
                    break;
                case 100:
                    aResumeFrom = reader.Subscription.Cursors[a].From;
                    Assert.True(reader.Subscription.Remove(a));
                    break;
                case 300:
                    reader.Subscription.Add(d, 1);
                    break;
                case 500:
                    reader.Subscription.Add(a, aResumeFrom);
                    break;
            }
        }
        await publishing.WaitAsync(TestSupport.Timeout);

        Assert.Equal(Enumerable.Range(1, perTopic).Select(i => (long)i), received[a]);
        Assert.Equal(Enumerable.Range(1, perTopic).Select(i => (long)i), received[b]);
        Assert.Equal(Enumerable.Range((int)cFirst!.Value, perTopic - (int)cFirst.Value + 1).Select(i => (long)i), received[c]);
        Assert.Equal(Enumerable.Range(1, perTopic).Select(i => (long)i), received[d]);

        static int CountBefore(long? first) => first is { } f ? (int)f - 1 : 0;
    }
}
