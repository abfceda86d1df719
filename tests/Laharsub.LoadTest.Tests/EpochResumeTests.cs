using System.Net.Http.Headers;
using System.Text;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;
using Laharsub.Testing;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// The generator's polls carry each topic's epoch, so that a topic id that comes back as another topic
/// during a run (a restart without persistence, a flushed Redis) is counted as an epoch reset rather
/// than read on as if it were the old topic.
/// </summary>
public sealed class EpochResumeTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);

    [Theory]
    [InlineData("json")]
    [InlineData("multipart")]
    public async Task AfterARestartThatLostTheDataTheNextPollIsAnEpochResetAndNotASilentSkip(string formatName)
    {
        var format = formatName == "json" ? WireFormatKind.Json : WireFormatKind.Multipart;
        var first = await LaharsubTestServer.StartAsync().WaitAsync(Bound);
        var topic = (await LoadRuns.CreateTopicsAsync(first.BaseAddress, 1))[0];
        await PublishStampedAsync(first, topic, 2);
        using var engine = new LoadEngine(LoadRuns.Plan(first.BaseAddress, [topic], format) with { ClientsPerTopic = 1 });
        var client = engine.Clients[0];
        await PollOnceAsync(first, client);
        var port = first.BaseAddress.Port;
        await first.DisposeAsync();

        await using var second = await LaharsubTestServer.StartAsync(port: port).WaitAsync(Bound);
        var again = (await LoadRuns.CreateTopicsAsync(second.BaseAddress, 1))[0];
        await PublishStampedAsync(second, again, 5);
        // Without the epoch, the cursor 3 lies inside the new topic: 3..5 would be read as the old topic's.
        var query = await PollOnceAsync(second, client);

        Assert.Equal(topic, again);
        Assert.Equal(1, engine.Counters.EpochResets);
        Assert.Matches($"topics={topic}:3~[0-9a-f]{{16}}$", query);
        Assert.Equal(0, engine.Counters.Resets);
        Assert.Equal((0L, 0L), (engine.Counters.Lost, engine.Counters.Duplicates));
        Assert.Equal(2 + 5, engine.DeliveriesTotal);
        Assert.Equal(6, client.Topics[0].Next);
    }

    [Fact]
    public void AnAnswerWithoutEpochsLeavesTheQueryAsItWas()
    {
        // A server from before epochs, or one that names none: the generator must not send '~'.
        using var engine = new LoadEngine(LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [7]) with { ClientsPerTopic = 1 });
        var client = engine.Clients[0];
        var scratch = new byte[16];
        PollResponseReader.ReadJson("""{"notices":[],"messages":[{"topicId":7,"messageId":1,"encoding":"text","body":"x"}]}"""u8, client, ref scratch);

        Assert.Equal("timeout=30&topics=7:2", Query(client));
    }

    [Theory]
    [InlineData("a b")]
    [InlineData("0123456789abcdef0123456789abcdef0")]
    public void AnEpochThatIsNotOneMakesTheAnswerUnreadableInsteadOfBreakingTheNextRequest(string epoch)
    {
        using var engine = new LoadEngine(LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [7]) with { ClientsPerTopic = 1 });
        var scratch = new byte[16];
        var json = Encoding.UTF8.GetBytes($$"""{"messages":[{"topicId":7,"epoch":"{{epoch}}","messageId":1,"encoding":"text","body":"x"}]}""");

        var error = Assert.Throws<FormatException>(() => PollResponseReader.ReadJson(json, engine.Clients[0], ref scratch));

        Assert.Contains("epoch", error.Message);
        Assert.Equal("timeout=30&topics=7:1", Query(engine.Clients[0]));
    }

    private static string Query(SimulatedClient client)
    {
        var buffer = new byte[1024];
        Assert.True(client.Wire.TryWriteQuery(buffer, out var written));
        return Encoding.ASCII.GetString(buffer, 0, written);
    }

    private static async Task PublishStampedAsync(LaharsubTestServer server, long topic, int count)
    {
        using var http = server.CreateClient(Bound);
        for (var i = 0; i < count; i++)
        {
            var body = new byte[MessageStamp.Size];
            var now = MonotonicClock.NowMicroseconds;
            MessageStamp.Write(body, now, now);
            (await http.PostAsync($"topics/{topic}", new ByteArrayContent(body)).WaitAsync(Bound)).EnsureSuccessStatusCode();
        }
    }

    /// <summary>Sends the poll the client would send next (its own query and Accept) and feeds the answer to it.</summary>
    private static async Task<string> PollOnceAsync(LaharsubTestServer server, SimulatedClient client)
    {
        var query = Query(client);
        using var http = server.CreateClient(Bound);
        using var request = new HttpRequestMessage(HttpMethod.Get, "subscriptions?" + query);
        request.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue(client.Wire.Accept));
        using var response = await http.SendAsync(request).WaitAsync(Bound);
        var body = await response.Content.ReadAsByteArrayAsync().WaitAsync(Bound);
        var contentType = Encoding.ASCII.GetBytes(response.Content.Headers.ContentType!.ToString());
        Assert.True(((IRawPollHandler)client).OnResponse(new RawPollResponse((int)response.StatusCode, default, contentType, body)),
            $"the poll was answered {(int)response.StatusCode}");
        return query;
    }
}
