using System.Net;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>Runs alone: it measures the managed heap of the test process, which other tests would disturb.</summary>
[CollectionDefinition(nameof(MemoryBoundTests), DisableParallelization = true)]
public sealed class MemoryBoundIsolation;

/// <summary>MaxRetainedBytes bounds what retained messages really cost, not only their bodies.</summary>
[Collection(nameof(MemoryBoundTests))]
public sealed class MemoryBoundTests(Xunit.Abstractions.ITestOutputHelper output)
{
    /// <summary>
    /// A bound on the managed heap for the worst case, text that JSON escapes six-fold: an encoding beyond
    /// what the store counted is kept only if its cost fits (RetainedCost), so the heap grows about 1x
    /// (this test process's own client buffers included); RssBoundTests holds the README's factor on the
    /// real server's RSS.
    /// </summary>
    private const int StatedFactor = 2;

    [Fact]
    public async Task WorstCaseBodiesFillRetentionWithinTheStatedFactorOfTheSettingThen507()
    {
        const long maxRetained = 24L * 1024 * 1024;
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxRetainedBytes = maxRetained; o.MaxMessageBytes = 256 * 1024; });
        using var client = server.CreateClient(TimeSpan.FromSeconds(60));
        var topic = await client.CreateTopicAsync();
        // A control character is escaped as \u0001 in JSON: every body byte becomes six bytes of its JSON element.
        var body = Encoding.ASCII.GetBytes(new string('\u0001', 256 * 1024));
        var before = GC.GetTotalMemory(forceFullCollection: true);

        var stored = 0;
        HttpStatusCode status;
        while (true)
        {
            using var content = new ByteArrayContent(body);
            content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("text/plain");
            using var response = await client.PostAsync($"topics/{topic}", content).WaitAsync(WireClient.Bound);
            status = response.StatusCode;
            if (status != HttpStatusCode.Created)
            {
                break;
            }
            stored++;
            Assert.True(stored < 1000, "retention never filled");
            // Both wire forms of every message are made and cached, as subscribers in both formats would.
            await client.PollAsync($"topics={topic}:{stored}&timeout=0");
            await client.PollAsync($"topics={topic}:{stored}&timeout=0", "multipart/mixed");
        }
        var after = GC.GetTotalMemory(forceFullCollection: true);

        Assert.Equal(HttpStatusCode.InsufficientStorage, status);
        Assert.True(stored > 0, "at least one message fits");
        var grown = after - before;
        Assert.True(grown <= StatedFactor * maxRetained,
            $"{stored} retained messages grew the managed heap by {grown / 1048576.0:0.0} MiB, above {StatedFactor} x MaxRetainedBytes ({StatedFactor * maxRetained / 1048576.0:0} MiB)");
        // And what is counted is honest: the bodies alone would have been a third of it.
        Assert.True(grown >= stored * (long)body.Length, $"the heap grew by {grown} bytes, less than the {stored} bodies retained");
    }

    [Fact]
    public async Task OneByteMessagesFillRetentionWithinTheStatedFactorOfTheSettingThen507()
    {
        // The review's other case: 50,000 one-byte messages cost about 2.2 KB each when only bodies were counted.
        const long maxRetained = 8L * 1024 * 1024;
        const int topics = 16;
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.MaxRetainedBytes = maxRetained;
            o.MaxMessagesPerTopic = 100_000;
            o.MaxMessagesPerPoll = 100_000;
            o.MaxBytesPerPoll = int.MaxValue;
        });
        using var client = server.CreateClient(TimeSpan.FromSeconds(60));
        var topicIds = new long[topics];
        for (var i = 0; i < topics; i++)
        {
            topicIds[i] = await client.CreateTopicAsync();
        }
        var before = GC.GetTotalMemory(forceFullCollection: true);

        // One publisher per topic, each until the server is full.
        var counts = await Task.WhenAll(topicIds.Select(async topic =>
        {
            var stored = 0;
            while (true)
            {
                using var content = new ByteArrayContent("x"u8.ToArray());
                content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("text/plain");
                using var response = await client.PostAsync($"topics/{topic}", content).WaitAsync(WireClient.Bound);
                if (response.StatusCode != HttpStatusCode.Created)
                {
                    Assert.Equal(HttpStatusCode.InsufficientStorage, response.StatusCode);
                    return stored;
                }
                stored++;
                Assert.True(stored < 2000, "retention never filled: about 800 one-byte messages per topic should fill it");
            }
        }));
        foreach (var topic in topicIds)
        {
            // Both wire forms of every message are made and cached, as subscribers in both formats would.
            await client.PollAsync($"topics={topic}:1&timeout=0");
            await client.PollAsync($"topics={topic}:1&timeout=0", "multipart/mixed");
        }
        var after = GC.GetTotalMemory(forceFullCollection: true);

        var stored = counts.Sum();
        var grown = after - before;
        output.WriteLine($"{stored} one-byte messages: the heap grew {grown / 1048576.0:0.0} MiB, {grown / (double)stored:0} bytes each, {grown / (double)maxRetained:0.00} x MaxRetainedBytes");
        Assert.True(stored > 1000, $"only {stored} one-byte messages fit in {maxRetained} bytes");
        Assert.True(grown <= StatedFactor * maxRetained,
            $"{stored} retained one-byte messages grew the managed heap by {grown / 1048576.0:0.0} MiB, above {StatedFactor} x MaxRetainedBytes ({StatedFactor * maxRetained / 1048576.0:0} MiB)");
    }
}
