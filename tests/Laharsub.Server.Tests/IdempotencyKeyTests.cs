using System.Net;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests;

/// <summary>The <c>Idempotency-Key</c> header on both publishes: a retry gets the first answer and publishes nothing; a reuse with another request is 422.</summary>
public sealed class IdempotencyKeyTests
{
    public static TheoryData<string> Publishes => new() { "single", "many" };

    [Theory]
    [MemberData(nameof(Publishes))]
    public async Task ARetryWithTheSameKeyGetsTheFirstAnswerAndPublishesNothing(string kind)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        var url = kind == "single" ? $"topics/{a}" : $"topics/publish?topics={a},{b}";

        var (firstStatus, first) = await PublishAsync(client, url, "once", "\"key-1\"");
        await client.PublishTextAsync(a, "between");
        var (secondStatus, second) = await PublishAsync(client, url, "once", "key-1");
        var poll = await client.PollAsync($"topics={a}:1,{b}:1");

        Assert.Equal((HttpStatusCode.Created, HttpStatusCode.Created), (firstStatus, secondStatus));
        Assert.Equal(first, second);
        Assert.Equal(kind == "single" ? ["once", "between"] : ["once", "between", "once"],
            poll.Messages.OrderBy(m => m.TopicId).ThenBy(m => m.MessageId).Select(m => m.Text));
    }

    /// <summary>The same key with another body, content type or target is refused with 422 naming the header, and publishes nothing.</summary>
    [Theory]
    [InlineData("body")]
    [InlineData("contentType")]
    [InlineData("target")]
    [InlineData("epoch")]
    public async Task TheSameKeyWithAnotherRequestIs422(string change)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        var epoch = (await client.GetTopicAsync(a)).GetProperty("epoch").GetString();
        await PublishAsync(client, $"topics/publish?topics={a}", "first", "k");

        using var request = new HttpRequestMessage(HttpMethod.Post, change switch
        {
            "target" => $"topics/publish?topics={a},{b}",
            "epoch" => $"topics/publish?topics={a}~{epoch}",
            _ => $"topics/publish?topics={a}",
        })
        {
            Content = new StringContent(change == "body" ? "second" : "first", Encoding.UTF8, change == "contentType" ? "application/json" : "text/plain"),
        };
        request.Headers.TryAddWithoutValidation("Idempotency-Key", "k");
        var (status, problem) = await client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.UnprocessableEntity, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty("Idempotency-Key", out _), problem.ToString());
        Assert.Equal(1, (await client.GetTopicAsync(a)).GetProperty("lastMessageId").GetInt64());
        Assert.Equal(0, (await client.GetTopicAsync(b)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task ARefusedPublishRecordsNoKeySoItsRetryRuns()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();

        var (refused, _) = await PublishAsync(client, $"topics/publish?topics={a},999999", "x", "k");
        var (retried, answer) = await PublishAsync(client, $"topics/publish?topics={a}", "x", "k2");

        Assert.Equal(HttpStatusCode.NotFound, refused);
        Assert.Equal(HttpStatusCode.Created, retried);
        Assert.Contains("\"messageId\":1", answer);
    }

    [Fact]
    public async Task AKeyIsForgottenAfterItsLifetimeAndItsBytesAreCountedUntilThen()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(options => options.IdempotencyKeyLifetime = TimeSpan.FromSeconds(1),
            services => services.AddSingleton<TimeProvider>(clock));
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var retainedBefore = await RetainedBytesAsync(server);

        await PublishAsync(client, $"topics/{a}", "x", "k");
        var withKey = await RetainedBytesAsync(server);
        // The retention sweep, on the same clock, forgets the key and releases its bytes.
        clock.Advance(TimeSpan.FromSeconds(2));
        await Eventually.HoldsAsync(async () => await RetainedBytesAsync(server) < withKey, WireClient.Bound, "the expired key's bytes must be released");
        var (status, answer) = await PublishAsync(client, $"topics/{a}", "x", "k");

        Assert.True(withKey > retainedBefore);
        Assert.Equal(HttpStatusCode.Created, status);
        Assert.Contains("\"messageId\":2", answer);
    }

    private static async Task<long> RetainedBytesAsync(LaharsubTestServer server)
    {
        var stats = await server.Store.GetStatisticsAsync();
        return stats.RetainedBytes;
    }

    private static async Task<(HttpStatusCode Status, string Body)> PublishAsync(HttpClient client, string url, string text, string key)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, url) { Content = new StringContent(text, Encoding.UTF8, "text/plain") };
        request.Headers.TryAddWithoutValidation("Idempotency-Key", key);
        using var response = await client.SendAsync(request).WaitAsync(WireClient.Bound);
        return (response.StatusCode, await response.Content.ReadAsStringAsync());
    }
}
