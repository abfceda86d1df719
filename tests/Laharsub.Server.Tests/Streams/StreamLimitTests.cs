using System.Net;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>The per-client caps of Laharsub:Limits count streams as they count waiting polls.</summary>
public sealed class StreamLimitTests
{
    [Fact]
    public async Task EveryOpenStreamCountsAgainstTheClientsWaitingPollCapAndGivesItsSlotBackWhenItEnds()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Laharsub:Limits:MaxWaitingPollsPerClient"] = "2",
        });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var events = await EventStreamReader.OpenAsync(client, $"topics={topic}");
        await events.ReadEventAsync("subscribed");
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}");
        await socket.ReceiveAsync("subscribed");

        using var thirdStream = await EventStreamReader.RequestAsync(client, $"topics={topic}", accept: StreamAccessTests.EventStreamOrProblem);
        var thirdSocket = await LaharsubSocket.RefusedAsync(server.ApiAddress, $"topics={topic}");
        var problem = JsonDocument.Parse(await thirdStream.Content.ReadAsStringAsync()).RootElement;
        await events.DisposeAsync();
        // The slot comes back once the server has ended the dropped stream.
        EventStreamReader? admitted = null;
        await Eventually.HoldsAsync(async () =>
        {
            var response = await EventStreamReader.RequestAsync(client, $"topics={topic}");
            if (response.StatusCode != HttpStatusCode.OK)
            {
                response.Dispose();
                return false;
            }
            admitted = await EventStreamReader.ReadingAsync(response);
            return true;
        }, WireClient.Bound, "a stream is admitted again");
        await using (admitted)
        {
            await admitted!.ReadEventAsync("subscribed");
        }

        Assert.Equal(HttpStatusCode.TooManyRequests, thirdStream.StatusCode);
        Assert.Equal("Laharsub:Limits:MaxWaitingPollsPerClient", problem.GetProperty("setting").GetString());
        Assert.Equal(2, problem.GetProperty("limit").GetInt32());
        Assert.Equal(HttpStatusCode.TooManyRequests, thirdSocket);
    }

    [Fact]
    public async Task ABrowsersEventSourceOverTheCapIsRefused429NotA500()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Laharsub:Limits:MaxWaitingPollsPerClient"] = "1",
        });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var first = await EventStreamReader.OpenAsync(client, $"topics={topic}");
        await first.ReadEventAsync("subscribed");

        using var second = await EventStreamReader.RequestAsync(client, $"topics={topic}");

        Assert.Equal(HttpStatusCode.TooManyRequests, second.StatusCode);
        Assert.NotNull(second.Headers.RetryAfter);
    }
}
