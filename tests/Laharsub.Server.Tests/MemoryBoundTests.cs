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
public sealed class MemoryBoundTests
{
    /// <summary>
    /// The factor docs/architecture.md states for the worst case, text that JSON escapes six-fold
    /// (measured 3.4 here, counting this test process's own client buffers too).
    /// </summary>
    private const int StatedFactor = 4;

    [Fact]
    public async Task WorstCaseBodiesFillRetentionWithinTheStatedFactorOfTheSettingThen507()
    {
        const long maxRetained = 24L * 1024 * 1024;
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxRetainedBytes = maxRetained; o.MaxMessageBytes = 256 * 1024; });
        using var client = server.CreateClient(TimeSpan.FromSeconds(60));
        var topic = await client.CreateTopicAsync();
        // '<' is escaped as \u003C in JSON: every body byte becomes six bytes of the cached JSON element.
        var body = Encoding.ASCII.GetBytes(new string('<', 256 * 1024));
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
}
