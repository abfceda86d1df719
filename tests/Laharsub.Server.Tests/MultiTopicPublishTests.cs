using System.Net;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary><c>POST /topics/publish?topics=...</c>: one message to several topics, all or none, over real HTTP.</summary>
public sealed class MultiTopicPublishTests
{
    [Fact]
    public async Task OneCallPublishesToEveryTopicAndAnswersEachIdInTheQuerysOrder()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        await client.PublishTextAsync(b, "before");
        var epochB = (await client.GetTopicAsync(b)).GetProperty("epoch").GetString();

        using var response = await client.PostAsync($"topics/publish?topics={b}~{epochB},{a}", new StringContent("both", Encoding.UTF8, "text/plain")).WaitAsync(WireClient.Bound);
        var answer = JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement;
        var poll = await client.PollAsync($"topics={a}:1,{b}:1");

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        var messages = answer.GetProperty("messages").EnumerateArray().Select(m => (m.GetProperty("topicId").GetInt64(), m.GetProperty("messageId").GetInt64())).ToArray();
        Assert.Equal([(b, 2L), (a, 1L)], messages);
        Assert.Equal(epochB, answer.GetProperty("messages")[0].GetProperty("epoch").GetString());
        Assert.Equal(["both", "before", "both"], poll.Messages.OrderBy(m => m.TopicId).ThenBy(m => m.MessageId).Select(m => m.Text));
    }

    /// <summary>The mixed cases: whatever refuses, nothing is published anywhere, and the problem's topics extension names each refusing topic and why.</summary>
    [Theory]
    [InlineData("ok,missing", 404, "missing:notFound")]
    [InlineData("ok,stale", 412, "stale:epochMismatch")]
    [InlineData("stale,missing,ok", 404, "stale:epochMismatch,missing:notFound")]
    [InlineData("missing,missing", 404, "missing:notFound,missing:notFound")]
    public async Task ARefusingTopicPublishesNothingAndIsNamed(string shape, int status, string named)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var mixed = await MixedTopics.CreateAsync(client, shape);

        var (code, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/publish?topics={mixed.Topics}")
        {
            Content = new StringContent("never", Encoding.UTF8, "text/plain"),
        });

        Assert.Equal(status, (int)code);
        Assert.Equal(named, mixed.Named(problem));
        Assert.Contains("Nothing was published", problem.GetProperty("detail").GetString());
        foreach (var id in mixed.Existing)
        {
            Assert.Equal(0, (await client.GetTopicAsync(id)).GetProperty("lastMessageId").GetInt64());
        }
    }

    /// <summary>Every bad input is a 400 problem naming the field, and publishes nothing.</summary>
    [Theory]
    [InlineData("topics/publish", "topics")]
    [InlineData("topics/publish?topics=", "topics")]
    [InlineData("topics/publish?topics=1,x", "topics")]
    [InlineData("topics/publish?topics=0", "topics")]
    [InlineData("topics/publish?topics={a},{a}", "topics")]
    [InlineData("topics/publish?topics={a}~not%20an%20epoch", "topics")]
    [InlineData("topics/publish?topics={a},{b},{c}", "topics")]
    [InlineData("topics/publish?topics={a}&topic={b}", "topic")]
    [InlineData("topics/publish?topics={a}&topics={b}", "topics")]
    [InlineData("topics/publish?topics={a}|if-match", "If-Match")]
    [InlineData("topics/publish?topics={a}|key:", "Idempotency-Key")]
    [InlineData("topics/publish?topics={a}|key:long", "Idempotency-Key")]
    [InlineData("topics/publish?topics={a}|key:bad", "Idempotency-Key")]
    [InlineData("topics/{a}|key:long", "Idempotency-Key")]
    [InlineData("topics/{a}|key:", "Idempotency-Key")]
    [InlineData("topics/publish?topics={a}|type:*/*", "Content-Type")]
    [InlineData("topics/publish?topics={a}|empty", "body")]
    public async Task BadInputIsAProblemNamingTheField(string shape, string field)
    {
        await using var server = await LaharsubTestServer.StartAsync(options => options.MaxTopicsPerPublish = 2);
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        var c = await client.CreateTopicAsync();
        var parts = shape.Replace("{a}", $"{a}").Replace("{b}", $"{b}").Replace("{c}", $"{c}").Split('|');
        var request = new HttpRequestMessage(HttpMethod.Post, parts[0])
        {
            Content = new ByteArrayContent(parts.Contains("empty") ? [] : "x"u8.ToArray()),
        };
        request.Content.Headers.TryAddWithoutValidation("Content-Type", parts.FirstOrDefault(p => p.StartsWith("type:"))?[5..] ?? "text/plain");
        if (parts.Contains("if-match"))
        {
            request.Headers.TryAddWithoutValidation("If-Match", "\"0000000000000000\"");
        }
        if (parts.FirstOrDefault(p => p.StartsWith("key:")) is { } key)
        {
            var value = key[4..] switch { "long" => new string('k', 256), "bad" => "\"caf\\\"e\"", var other => other };
            request.Headers.TryAddWithoutValidation("Idempotency-Key", value);
        }

        var (status, problem) = await client.SendForProblemAsync(request);

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty(field, out _), $"the problem must name {field}: {problem}");
        foreach (var topic in new[] { a, b, c })
        {
            Assert.Equal(0, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
        }
    }

    [Fact]
    public async Task TooManyTopicsNamesTheLimitAndItsSetting()
    {
        await using var server = await LaharsubTestServer.StartAsync(options => options.MaxTopicsPerPublish = 3);
        using var client = server.CreateClient();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, "topics/publish?topics=1,2,3,4")
        {
            Content = new StringContent("x"),
        });

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Contains("Laharsub:MaxTopicsPerPublish", problem.GetProperty("errors").GetProperty("topics")[0].GetString());
    }
}
