using System.Net.Http.Json;
using System.Text.Json;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTest.Tests;

/// <summary>Short runs of the real load engine for tests: a handful of clients for a few seconds.</summary>
internal static class LoadRuns
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    /// <summary>
    /// Asserts what a short run's report (its JSON) must show: about <paramref name="expectedAbout"/> deliveries
    /// expected (within 20 %: the machine may be busy), every one received and measured once, in order, without
    /// a transport or HTTP error.
    /// </summary>
    public static void AssertEveryMessageDeliveredOnce(JsonElement run, double expectedAbout)
    {
        var expected = run.GetProperty("deliveriesExpected").GetInt64();
        Assert.InRange(expected, expectedAbout * 0.8, expectedAbout * 1.2);
        Assert.Equal(expected, run.GetProperty("deliveriesReceived").GetInt64());
        Assert.Equal(expected, run.GetProperty("latency").GetProperty("count").GetInt64());
        var totals = run.GetProperty("totals");
        Assert.Equal((0L, 0L, 0L), (totals.GetProperty("lost").GetInt64(), totals.GetProperty("duplicates").GetInt64(), totals.GetProperty("outOfOrder").GetInt64()));
        Assert.Equal(0, totals.GetProperty("transportErrors").GetInt64());
        Assert.Empty(totals.GetProperty("httpErrors").EnumerateObject());
    }

    public static async Task<long[]> CreateTopicsAsync(Uri serverRoot, int count)
    {
        using var client = new HttpClient { BaseAddress = new Uri(serverRoot, "ps/"), Timeout = TimeSpan.FromSeconds(10) };
        var ids = new long[count];
        for (var i = 0; i < count; i++)
        {
            using var response = await client.PostAsync("topics", null).WaitAsync(Timeout);
            response.EnsureSuccessStatusCode();
            ids[i] = (await response.Content.ReadFromJsonAsync<JsonElement>().WaitAsync(Timeout)).GetProperty("topicId").GetInt64();
        }
        return ids;
    }

    public static LoadPlan Plan(Uri root, long[] topicIds, WireFormatKind format = WireFormatKind.Json) => new()
    {
        ApiAddress = new Uri(root, "ps/"),
        TopicIds = topicIds,
        ClientsPerTopic = 2,
        TopicsPerClient = 1,
        PublishInterval = TimeSpan.FromMilliseconds(200),
        MessageSize = 10,
        Format = format,
        Warmup = TimeSpan.FromSeconds(0.5),
        Duration = TimeSpan.FromSeconds(2),
        SourceAddresses = 4,
        PublishConnections = 4,
    };

    public static async Task<ProcessResult> RunAsync(LoadPlan plan)
    {
        using var engine = new LoadEngine(plan);
        return await EngineSession.RunAsync(engine, _ => Task.FromResult(MonotonicClock.NowMicroseconds + 100_000), CancellationToken.None)
            .WaitAsync(Timeout);
    }
}
