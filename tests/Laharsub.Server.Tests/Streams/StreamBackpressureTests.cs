using System.Diagnostics;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// Nothing is queued per stream (docs/protocol.md, "Streams"): a client that stops reading is written to
/// later, from retention. Runs alone, in <see cref="MemoryBoundTests"/>' collection: it measures the managed
/// heap of the test process, in which the server runs, and other tests would disturb it.
/// </summary>
[Collection(nameof(MemoryBoundTests))]
public sealed class StreamBackpressureTests(Xunit.Abstractions.ITestOutputHelper output)
{
    [Fact]
    public async Task AnEventStreamThatStopsReadingCostsBoundedMemoryStallsNoOtherSubscriberAndIsToldOfTheGapWhenItReadsAgain()
    {
        const int messageBytes = 256 * 1024;
        const int count = 400;
        const long maxRetained = 16L * 1024 * 1024;
        // The publisher runs at most this far ahead of the fast reader, well inside what retention keeps (8).
        const int window = 4;
        // Measured from here on: by then the slow stream's socket buffers are full and it is stalled, and the
        // server's and the test's buffer pools have grown to what 256 KiB messages need.
        const int warmUp = 40;
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.MaxMessageBytes = messageBytes;
            o.MaxMessagesPerTopic = 8;
            o.MaxRetainedBytes = maxRetained;
            // The stalled stream must outlast the test rather than be ended as too slow.
            o.Streams.MaxWriteWait = TimeSpan.FromMinutes(10);
        });
        using var publisher = server.CreateClient(TimeSpan.FromSeconds(60));
        using var slowClient = server.CreateClient(TimeSpan.FromMinutes(5));
        using var fastClient = server.CreateClient(TimeSpan.FromMinutes(5));
        var topic = await publisher.CreateTopicAsync();
        await using var slow = await EventStreamReader.OpenAsync(slowClient, $"topics={topic}");
        await slow.ReadEventAsync("subscribed");
        await using var fast = await EventStreamReader.OpenAsync(fastClient, $"topics={topic}");
        await fast.ReadEventAsync("subscribed");
        var body = new byte[messageBytes];
        Array.Fill(body, (byte)'x');
        var atStart = GC.GetTotalMemory(forceFullCollection: true);
        var before = atStart;
        var clock = Stopwatch.StartNew();

        // The slow stream reads nothing from here on, while about 100 MB is published to its topic.
        using var room = new SemaphoreSlim(window);
        var fastIds = new List<long>();
        var fastReader = Task.Run(async () =>
        {
            while (fastIds.Count < count)
            {
                var (type, id, length) = Summary(await fast.ReadEventAsync());
                Assert.True(type == "message", $"the fast reader got a {type} after message {fastIds.LastOrDefault()}");
                Assert.Equal(messageBytes, length);
                fastIds.Add(id);
                room.Release();
            }
        });
        for (var i = 1; i <= count; i++)
        {
            if (!await room.WaitAsync(WireClient.Bound))
            {
                await fastReader.WaitAsync(TimeSpan.FromSeconds(1));
                Assert.Fail($"the fast reader stalled after {fastIds.Count} messages");
            }
            if (i == warmUp + 1)
            {
                before = GC.GetTotalMemory(forceFullCollection: true);
            }
            Encoding.ASCII.GetBytes(i.ToString("D6", System.Globalization.CultureInfo.InvariantCulture), body);
            await publisher.PublishAsync(topic, body, "text/plain");
        }
        await fastReader.WaitAsync(WireClient.Bound);
        var published = clock.Elapsed;
        var after = GC.GetTotalMemory(forceFullCollection: true);
        var grown = after - before;

        // Now it reads again: what it had been sent, a gap for what retention dropped meanwhile, the rest.
        var slowItems = new List<(string Type, long From, long To)>();
        while (slowItems.Count == 0 || slowItems[^1] is not ("message", count, count))
        {
            var @event = await slow.ReadEventAsync();
            using var json = JsonDocument.Parse(@event.Data);
            var root = json.RootElement;
            slowItems.Add(@event.Type == "notice"
                ? (root.GetProperty("type").GetString()!, root.GetProperty("fromMessageId").GetInt64(), root.GetProperty("toMessageId").GetInt64())
                : (@event.Type, root.GetProperty("messageId").GetInt64(), root.GetProperty("messageId").GetInt64()));
        }
        output.WriteLine($"published {count} x {messageBytes / 1024} KiB in {published.TotalSeconds:0.0} s; managed heap grew {(after - atStart) / 1048576.0:0.0} MiB in all, " +
            $"{grown / 1048576.0:0.0} MiB after the first {warmUp}; " +
            $"the slow stream read {slowItems.Count(i => i.Type == "message")} messages and gaps {string.Join(", ", slowItems.Where(i => i.Type == "gap").Select(g => $"{g.From}..{g.To}"))}");

        Assert.Equal(Enumerable.Range(1, count).Select(i => (long)i), fastIds);
        Assert.True(grown < 3 * maxRetained + 16L * 1024 * 1024,
            $"the managed heap grew by {grown / 1048576.0:0.0} MiB while a stalled stream's topic got {(count - warmUp) * (long)messageBytes / 1048576} MiB more: more than 3 x MaxRetainedBytes + 16 MiB");
        Assert.Contains(slowItems, item => item.Type == "gap");
        // Every id exactly once, in order, as a message or inside a gap: nothing skipped silently, nothing twice.
        var next = 1L;
        foreach (var (type, from, to) in slowItems)
        {
            Assert.True(type is "message" or "gap", $"unexpected {type}");
            Assert.True(from == next, $"after id {next - 1} the slow stream got a {type} from {from}: {string.Join(' ', slowItems)}");
            next = to + 1;
        }
        Assert.Equal(count + 1, next);
    }

    private static (string Type, long MessageId, int Length) Summary(ServerSentEvent @event)
    {
        if (@event.Type != "message")
        {
            return (@event.Type, 0, 0);
        }
        using var json = JsonDocument.Parse(@event.Data);
        return ("message", json.RootElement.GetProperty("messageId").GetInt64(), json.RootElement.GetProperty("body").GetString()!.Length);
    }
}
