using System.Net.Http.Headers;
using System.Net;
using System.Text.Json;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// Topic epochs on the wire: a topic id that comes back as another incarnation (a restart without
/// persistence, a store that lost its data) is never read or written as if it were the old one.
/// </summary>
public sealed class EpochTests
{
    private static async Task<(long Topic, string Epoch)> CreateAsync(HttpClient client)
    {
        using var response = await client.PostAsync("topics", null).WaitAsync(WireClient.Bound);
        var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement;
        var epoch = json.GetProperty("epoch").GetString()!;
        Assert.Equal($"\"{epoch}\"", response.Headers.ETag!.Tag);
        return (json.GetProperty("topicId").GetInt64(), epoch);
    }

    /// <summary>
    /// A topic created on a server that then restarts on the same port without its data, where the
    /// topic is created again: the old incarnation's epoch, and a client of the restarted server.
    /// </summary>
    private static async Task<Restarted> RestartWithoutDataAsync()
    {
        await using var first = await LaharsubTestServer.StartAsync();
        using var before = first.CreateClient();
        var (topic, oldEpoch) = await CreateAsync(before);
        await first.StopAsync();
        var second = await LaharsubTestServer.StartAsync(port: first.BaseAddress.Port);
        var client = second.CreateClient();
        try
        {
            var (again, newEpoch) = await CreateAsync(client);
            return new Restarted(client, topic, oldEpoch, again, newEpoch) { Server = second };
        }
        catch
        {
            client.Dispose();
            await second.DisposeAsync();
            throw;
        }
    }

    private sealed record Restarted(HttpClient Client, long Topic, string OldEpoch, long Again, string NewEpoch) : IAsyncDisposable
    {
        public required LaharsubTestServer Server { get; init; }

        public async ValueTask DisposeAsync()
        {
            Client.Dispose();
            await Server.DisposeAsync();
        }
    }

    [Fact]
    public async Task TheEpochIsInTopicInfoThePublishAnswerAndOnEveryMessageAndNoticeInBothFormats()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 1);
        using var client = server.CreateClient();
        var (topic, epoch) = await CreateAsync(client);
        await client.PublishTextAsync(topic, "one");
        using var published = await client.PostAsync($"topics/{topic}", new StringContent("two")).WaitAsync(WireClient.Bound);

        var info = await client.GetTopicAsync(topic);
        var json = await client.PollAsync($"topics={topic}:1");
        var multipart = await client.PollAsync($"topics={topic}:1", "multipart/mixed");
        var raw = await client.GetStringAsync($"subscriptions?topics={topic}:1").WaitAsync(WireClient.Bound);

        Assert.Equal(epoch, info.GetProperty("epoch").GetString());
        Assert.Equal(epoch, JsonDocument.Parse(await published.Content.ReadAsStringAsync()).RootElement.GetProperty("epoch").GetString());
        Assert.Equal(epoch, json.Notices.Single().Json.GetProperty("epoch").GetString());
        Assert.Equal(epoch, multipart.Notices.Single().Json.GetProperty("epoch").GetString());
        var message = JsonDocument.Parse(raw).RootElement.GetProperty("messages")[0];
        Assert.Equal(epoch, message.GetProperty("epoch").GetString());
        // The multipart headers: on the gap notice's part and on the message's part.
        var rawMultipart = await (await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}:1")
        {
            Headers = { Accept = { new MediaTypeWithQualityHeaderValue("multipart/mixed") } },
        }).WaitAsync(WireClient.Bound)).Content.ReadAsStringAsync();
        var partHeaders = rawMultipart.Split("\r\n--").Select(part => part.Split("\r\n\r\n")[0]).Where(h => h.Contains("Laharsub-Topic-Id")).ToList();
        Assert.Equal(2, partHeaders.Count);
        Assert.Contains("Laharsub-Notice: gap", partHeaders[0]);
        Assert.Contains("Laharsub-Message-Id: 2", partHeaders[1]);
        Assert.All(partHeaders, h => Assert.Contains($"\r\nLaharsub-Epoch: {epoch}", h));
    }

    [Fact]
    public async Task AfterARestartWithoutDataAResumingReaderIsToldInsteadOfSkippingSilently()
    {
        // The scenario of the issue: read up to 5 (cursor 6), restart, the id is created again and gets 10 messages.
        await using var restarted = await RestartWithoutDataAsync();
        var (client, topic, oldEpoch, again, newEpoch) = restarted;
        for (var i = 1; i <= 10; i++)
        {
            await client.PublishTextAsync(again, $"new {i}");
        }

        var withEpoch = await client.PollAsync($"topics={topic}:6~{oldEpoch}");
        var indexed = await client.PollAsync($"subs[0][topicid]={topic}&subs[0][from]=6&subs[0][epoch]={oldEpoch}");
        var withoutEpoch = await client.PollAsync($"topics={topic}:6");

        Assert.Equal(topic, again);
        foreach (var answer in new[] { withEpoch, indexed })
        {
            var reset = Assert.Single(answer.Notices);
            Assert.Equal(("reset", "epochChanged", newEpoch, oldEpoch), (reset.Type, reset.Json.GetProperty("reason").GetString(),
                reset.Json.GetProperty("epoch").GetString(), reset.Json.GetProperty("requestedEpoch").GetString()));
            Assert.Equal((6L, 1L, 10L), (reset.Get("requestedFrom"), reset.Get("firstMessageId"), reset.Get("lastMessageId")));
            Assert.Equal(Enumerable.Range(1, 10).Select(i => $"new {i}"), answer.Messages.Select(m => m.Text));
        }
        // A client that sends no epoch gets exactly what it got before epochs existed.
        Assert.Empty(withoutEpoch.Notices);
        Assert.Equal(Enumerable.Range(6, 5).Select(i => $"new {i}"), withoutEpoch.Messages.Select(m => m.Text));
    }

    [Fact]
    public async Task APublisherThatNamesTheEpochIsRefusedWith412WhenTheTopicIsAnotherIncarnation()
    {
        await using var restarted = await RestartWithoutDataAsync();
        var (client, topic, oldEpoch, _, newEpoch) = restarted;

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}")
        {
            Content = new StringContent("meant for the old topic"),
            Headers = { IfMatch = { new EntityTagHeaderValue($"\"{oldEpoch}\"") } },
        });
        using var matching = await client.SendAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}")
        {
            Content = new StringContent("meant for this one"),
            Headers = { IfMatch = { new EntityTagHeaderValue($"\"{newEpoch}\"") } },
        }).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.PreconditionFailed, status);
        Assert.Equal(newEpoch, problem.GetProperty("epoch").GetString());
        Assert.Contains(oldEpoch, problem.GetProperty("detail").GetString());
        Assert.Equal(HttpStatusCode.Created, matching.StatusCode);
        Assert.Equal(1, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Theory]
    [InlineData("topics=1:1~", "topics")]
    [InlineData("topics=1:1~has%20space", "topics")]
    [InlineData("topics=1~0123456789abcdef0123456789abcdef0", "topics")]
    [InlineData("subs[0][topicid]=1&subs[0][epoch]=a,b", "subs[0][epoch]")]
    public async Task AMalformedEpochIs400NamingTheParameter(string query, string parameter)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        await client.CreateTopicAsync();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, "subscriptions?" + query));

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty(parameter, out _), problem.ToString());
    }

    [Fact]
    public async Task AnIfMatchThatIsNotOneQuotedEpochIs400AndPublishesNothing()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _) = await CreateAsync(client);
        var request = new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new StringContent("x") };
        request.Headers.TryAddWithoutValidation("If-Match", "not quoted");

        var (status, problem) = await client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty("If-Match", out _));
        Assert.Equal(0, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }
}
