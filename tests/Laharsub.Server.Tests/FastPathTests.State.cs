using Laharsub.Server.Host.Composition;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using static Laharsub.Server.Tests.State.StateTopicTests;

namespace Laharsub.Server.Tests;

public sealed partial class FastPathTests
{
    /// <summary>
    /// State topics on one connection: the fast path serves the polls whose answers carry a state topic's rules (the
    /// document instead of a gap, a reset followed by the document, a conflated run composed into one patch) with the
    /// pipeline's bytes, and hands it the merge patches (whose ETag names the version) and the cursor <c>state</c>.
    /// </summary>
    [Fact]
    public Task TheFastPathAnswersStateTopicsAsThePipelineDoes() => AssertSameAnswersAsync(StateAnswersAsync);

    private static async Task<string[]> StateAnswersAsync(bool fastPath)
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3,
            settings: new Dictionary<string, string?> { [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false" });
        using var client = server.CreateClient();
        var (topic, _, _) = await CreateStateTopicAsync(client);
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        using var counter = new FastPathRequestCounter(server.Services);
        const string Patch = "application/merge-patch+json";
        string[] requests =
        [
            Post($"/ps/topics/{topic}", Patch, """{"a":1,"n":{"x":1}}"""),
            Post($"/ps/topics/{topic}", Patch, """{"b":2}"""),
            Post($"/ps/topics/{topic}", Patch, """{"n":{"y":2},"a":null}"""),
            Post($"/ps/topics/{topic}", "text/plain", "not a patch"),
            Get($"/ps/subscriptions?topics={topic}:2&latest=true&timeout=0"),
            Post($"/ps/topics/{topic}", Patch, """{"c":3}"""),
            Post($"/ps/topics/{topic}", Patch, """{"d":4}"""),
            Get($"/ps/subscriptions?topics={topic}:1&timeout=0"),
            Get($"/ps/subscriptions?topics={topic}:99&timeout=0"),
            Get($"/ps/subscriptions?topics={topic}:state&timeout=0"),
        ];
        var answers = await ExchangeAllAsync(connection, requests, origin: null, timeout.Token);
        Assert.Equal(fastPath ? 3 : 0, counter.Count("poll"));
        Assert.Equal(fastPath ? 5 : 0, counter.Count("pipeline", "merge_patch"));
        Assert.Equal(fastPath ? 1 : 0, counter.Count("pipeline", "store_refused"));
        Assert.Equal(fastPath ? 1 : 0, counter.Count("pipeline", "state_cursor"));
        Assert.Contains("\"type\":\"conflated\"", answers[4]);
        Assert.Contains("\"type\":\"state\"", answers[7]);
        return answers;
    }
}
