using System.Net;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// The WebSocket's <c>publish</c> frame to several topics (<c>topics</c>) and with an <c>idempotencyKey</c>
/// (docs/protocol.md, "WebSocket"): all or none and exactly once as REST's publish, in memory and on Redis.
/// </summary>
public sealed class WebSocketPublishTests
{
    public static TheoryData<string> Stores => new() { "memory", "redis" };

    [Theory]
    [MemberData(nameof(Stores))]
    public async Task AFrameNamingSeveralTopicsStoresEveryCopyAndAnswersEachIdInTheFramesOrder(string store)
    {
        await using var server = await StartAsync(store);
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        await client.PublishTextAsync(b, "before");
        var epochB = await client.EpochAsync(b);
        await using var socket = await OpenAsync(server);

        await socket.SendAsync($$"""{"type":"publish","id":"p1","topics":"{{b}}~{{epochB}},{{a}}","contentType":"text/plain","body":"both"}""");
        var answer = await socket.ReceiveAsync("published");
        var poll = await client.PollAsync($"topics={a}:1,{b}:1");

        Assert.Equal("p1", answer.GetProperty("id").GetString());
        Assert.Equal([(b, 2L, epochB), (a, 1L, await client.EpochAsync(a))], Messages(answer));
        Assert.False(answer.TryGetProperty("topicId", out _), "a publish to several topics answers as REST's: messages only");
        Assert.Equal([(a, "both"), (b, "before"), (b, "both")], poll.Messages.OrderBy(m => m.TopicId).ThenBy(m => m.MessageId).Select(m => (m.TopicId, m.Text)));
    }

    /// <summary>The mixed cases: whatever refuses, nothing is published anywhere, the problem names each refusing topic, and the socket goes on.</summary>
    [Theory]
    [InlineData("memory", "ok,missing", 404, "missing:notFound")]
    [InlineData("memory", "ok,stale", 412, "stale:epochMismatch")]
    [InlineData("memory", "stale,missing,ok", 404, "stale:epochMismatch,missing:notFound")]
    [InlineData("redis", "ok,missing", 404, "missing:notFound")]
    [InlineData("redis", "ok,stale", 412, "stale:epochMismatch")]
    [InlineData("redis", "stale,missing,ok", 404, "stale:epochMismatch,missing:notFound")]
    public async Task ARefusingTopicPublishesNothingAndIsNamed(string store, string shape, int status, string named)
    {
        await using var server = await StartAsync(store);
        using var client = server.CreateClient();
        var mixed = await MixedTopics.CreateAsync(client, shape);
        await using var socket = await OpenAsync(server);

        await socket.SendAsync($$"""{"type":"publish","id":"p1","topics":"{{mixed.Topics}}","body":"never"}""");
        var problem = await socket.ReceiveAsync("problem");
        await socket.SendAsync($$"""{"type":"publish","id":"p2","topicId":{{mixed.Existing[0]}},"body":"after"}""");
        var after = await socket.ReceiveAsync("published");

        Assert.Equal("p1", problem.GetProperty("id").GetString());
        var details = problem.GetProperty("problem");
        Assert.Equal(status, details.GetProperty("status").GetInt32());
        Assert.Equal(named, mixed.Named(details));
        Assert.Contains("Nothing was published", details.GetProperty("detail").GetString());
        Assert.Equal(1L, after.GetProperty("messageId").GetInt64());
        foreach (var id in mixed.Existing.Skip(1))
        {
            Assert.Equal(0, (await client.GetTopicAsync(id)).GetProperty("lastMessageId").GetInt64());
        }
    }

    /// <summary>A repeat with the same key gets the first answer and publishes nothing; the key with another body is 422 naming idempotencyKey.</summary>
    [Theory]
    [InlineData("memory", "single")]
    [InlineData("memory", "many")]
    [InlineData("redis", "single")]
    [InlineData("redis", "many")]
    public async Task AKeyedFrameIsStoredOnceAndItsKeyWithAnotherBodyIs422(string store, string kind)
    {
        await using var server = await StartAsync(store);
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        var target = kind == "single" ? $"\"topicId\":{a}" : $"\"topics\":\"{a},{b}\"";
        await using var socket = await OpenAsync(server);

        await socket.SendAsync($$"""{"type":"publish","id":"p1",{{target}},"body":"once","idempotencyKey":"k-1"}""");
        var first = await socket.ReceiveAsync("published");
        await client.PublishTextAsync(a, "between");
        await socket.SendAsync($$"""{"type":"publish","id":"p2",{{target}},"body":"once","idempotencyKey":"k-1"}""");
        var repeat = await socket.ReceiveAsync("published");
        await socket.SendAsync($$"""{"type":"publish","id":"p3",{{target}},"body":"other","idempotencyKey":"k-1"}""");
        var reused = await socket.ReceiveAsync("problem");
        var poll = await client.PollAsync($"topics={a}:1,{b}:1");

        Assert.Equal(Messages(first), Messages(repeat));
        Assert.Equal("p2", repeat.GetProperty("id").GetString());
        Assert.Equal(kind == "single", first.TryGetProperty("topicId", out _));
        Assert.Equal(422, reused.GetProperty("problem").GetProperty("status").GetInt32());
        Assert.True(reused.GetProperty("problem").GetProperty("errors").TryGetProperty("idempotencyKey", out _), $"the problem names idempotencyKey: {reused}");
        Assert.Equal(kind == "single" ? ["once", "between"] : ["once", "between", "once"],
            poll.Messages.OrderBy(m => m.TopicId).ThenBy(m => m.MessageId).Select(m => m.Text));
    }

    /// <summary>A key is one key whichever way it came: a frame repeating a REST publish with its key gets REST's answer.</summary>
    [Theory]
    [MemberData(nameof(Stores))]
    public async Task AFrameRepeatingARestPublishWithItsKeyGetsTheRestAnswer(string store)
    {
        await using var server = await StartAsync(store);
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        using var request = new HttpRequestMessage(HttpMethod.Post, $"topics/publish?topics={a},{b}") { Content = new StringContent("once", Encoding.UTF8, "text/plain") };
        request.Headers.TryAddWithoutValidation("Idempotency-Key", "\"shared\"");
        using var response = await client.SendAsync(request).WaitAsync(WireClient.Bound);
        var rest = JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement.Clone();
        await using var socket = await OpenAsync(server);

        await socket.SendAsync($$"""{"type":"publish","id":"p1","topics":"{{a}},{{b}}","contentType":"text/plain; charset=utf-8","body":"once","idempotencyKey":"shared"}""");
        var answer = await socket.ReceiveAsync("published");

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        Assert.Equal(Messages(rest), Messages(answer));
        Assert.Equal(1, (await client.GetTopicAsync(b)).GetProperty("lastMessageId").GetInt64());
    }

    /// <summary>Every bad input is a problem frame naming the field; nothing is published and the socket stays open.</summary>
    [Theory]
    [InlineData("\"topics\":\"{a},{b},{c}\"", "topics")]
    [InlineData("\"topics\":\"\"", "topics")]
    [InlineData("\"topics\":\"{a},x\"", "topics")]
    [InlineData("\"topics\":\"{a},{a}\"", "topics")]
    [InlineData("\"topics\":\"{a}~not an epoch\"", "topics")]
    [InlineData("\"topics\":[1,2]", "topics")]
    [InlineData("\"topics\":\"{a}\",\"topicId\":{a}", "topics")]
    [InlineData("\"topics\":\"{a}\",\"ifEpoch\":\"0000000000000000\"", "topics")]
    [InlineData("\"topicId\":\"{a}x\"", "topicId")]
    [InlineData("\"topicId\":{\"id\":1}", "topicId")]
    [InlineData("\"topicId\":{a},\"ifEpoch\":\"not an epoch\"", "ifEpoch")]
    [InlineData("\"topicId\":{a},\"idempotencyKey\":\"{long}\"", "idempotencyKey")]
    [InlineData("\"topics\":\"{a},{b}\",\"idempotencyKey\":\"{long}\"", "idempotencyKey")]
    [InlineData("\"topicId\":{a},\"idempotencyKey\":\"\"", "idempotencyKey")]
    [InlineData("\"topicId\":{a},\"idempotencyKey\":\"caf\u00e9\"", "idempotencyKey")]
    [InlineData("\"topicId\":{a},\"idempotencyKey\":true", "idempotencyKey")]
    [InlineData("\"topicId\":{a},\"idempotencyKey\":{\"k\":1}", "idempotencyKey")]
    [InlineData("\"topicId\":{a},\"contentType\":\"*/*\"", "contentType")]
    [InlineData("\"topicId\":{a},\"contentType\":[\"text/plain\"]", "contentType")]
    [InlineData("\"topics\":\"{a},{b}\",\"encoding\":\"hex\"", "encoding")]
    [InlineData("\"topics\":\"{a},{b}\",\"body\":{\"x\":1}", "body")]
    [InlineData("\"topics\":\"{a},{b}\",\"body\":\"\"", "body")]
    [InlineData("\"topics\":\"{a},{b}\",\"body\":123", "body")]
    [InlineData("\"topicId\":{a},\"body\":123", "body")]
    [InlineData("\"topicId\":{a},\"body\":\"x\\ud800\"", "body")]
    [InlineData("\"topicId\":{a},\"contentType\":\"text/plain\\udc00\"", "contentType")]
    [InlineData("\"topicId\":{a},\"idempotencyKey\":\"\\ud800\"", "idempotencyKey")]
    public async Task BadInputIsAProblemFrameNamingTheField(string properties, string field)
    {
        await using var server = await LaharsubTestServer.StartAsync(options => options.MaxTopicsPerPublish = 2);
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        var c = await client.CreateTopicAsync();
        var json = properties.Replace("{a}", $"{a}").Replace("{b}", $"{b}").Replace("{c}", $"{c}").Replace("{long}", new string('k', 256));
        var frame = json.Contains("\"body\"") ? $$"""{"type":"publish","id":"bad",{{json}}}""" : $$"""{"type":"publish","id":"bad",{{json}},"body":"x"}""";
        await using var socket = await OpenAsync(server);

        await socket.SendAsync(frame);
        var problem = await socket.ReceiveAsync("problem");
        await socket.SendAsync($$"""{"type":"publish","id":"ok","topics":"{{a}},{{b}}","body":"y"}""");
        var published = await socket.ReceiveAsync("published");

        Assert.Equal("bad", problem.GetProperty("id").GetString());
        Assert.Equal(400, problem.GetProperty("problem").GetProperty("status").GetInt32());
        Assert.True(problem.GetProperty("problem").GetProperty("errors").TryGetProperty(field, out _), $"the problem must name {field}: {problem}");
        Assert.Equal([(a, 1L), (b, 1L)], Messages(published).Select(m => (m.TopicId, m.MessageId)));
        Assert.Equal(0, (await client.GetTopicAsync(c)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task TooManyTopicsNamesTheLimitAndItsSetting()
    {
        await using var server = await LaharsubTestServer.StartAsync(options => options.MaxTopicsPerPublish = 3);
        await using var socket = await OpenAsync(server);

        await socket.SendAsync("""{"type":"publish","id":"p1","topics":"1,2,3,4","body":"x"}""");
        var problem = await socket.ReceiveAsync("problem");

        Assert.Contains("Laharsub:MaxTopicsPerPublish", problem.GetProperty("problem").GetProperty("errors").GetProperty("topics")[0].GetString());
    }

    /// <summary>A publish to several topics is one change against the rate limit, as its POST is one request.</summary>
    [Fact]
    public async Task AFrameToSeveralTopicsCountsOnceAgainstTheRateLimit()
    {
        // A period of an hour: no token comes back while the test runs. Creating the topics takes two of the three.
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.RateLimit.RequestsPerPeriod = 3;
            o.RateLimit.Period = TimeSpan.FromHours(1);
        });
        using var client = server.CreateClient();
        var a = await client.CreateTopicAsync();
        var b = await client.CreateTopicAsync();
        await using var socket = await OpenAsync(server);

        await socket.SendAsync($$"""{"type":"publish","id":"p1","topics":"{{a}},{{b}}","body":"x"}""");
        var allowed = await socket.ReceiveAsync("published");
        await socket.SendAsync($$"""{"type":"publish","id":"p2","topics":"{{a}},{{b}}","body":"y"}""");
        var refused = await socket.ReceiveAsync("problem");

        Assert.Equal(2, Messages(allowed).Length);
        Assert.Equal(429, refused.GetProperty("problem").GetProperty("status").GetInt32());
        Assert.True(refused.GetProperty("problem").GetProperty("retryAfter").GetInt64() > 0);
        Assert.Equal(1, (await client.GetTopicAsync(b)).GetProperty("lastMessageId").GetInt64());
    }

    /// <summary>
    /// A frame that finds the store unreachable gets the problem REST answers then (title, detail, the store's
    /// name), with its Retry-After as <c>retryAfter</c>, and the socket goes on reading frames.
    /// </summary>
    [Fact]
    public async Task AFrameThatFindsTheStoreUnreachableGetsRestsProblemWithItsRetryAfter()
    {
        await using var redis = await RedisServer.StartAsync();
        await using var server = await LaharsubTestServer.StartAsync(services: services => services.AddLaharsub().AddRedis(o => o.Configuration = redis.Configuration));
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await using var socket = await OpenAsync(server);
        await redis.KillAsync();

        using var response = await client.PostAsync($"topics/{topic}", new StringContent("x")).WaitAsync(WireClient.Bound);
        using var rest = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        await socket.SendAsync($$"""{"type":"publish","id":"p1","topicId":{{topic}},"body":"x"}""");
        var frame = await socket.ReceiveAsync("problem");
        await socket.SendAsync("""{"type":"nonsense","id":"p2"}""");
        var next = await socket.ReceiveAsync("problem");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        var retryAfter = (long)response.Headers.RetryAfter!.Delta!.Value.TotalSeconds;
        var problem = frame.GetProperty("problem");
        Assert.Equal("p1", frame.GetProperty("id").GetString());
        Assert.Equal(503, problem.GetProperty("status").GetInt32());
        Assert.Equal(rest.RootElement.GetProperty("title").GetString(), problem.GetProperty("title").GetString());
        Assert.Equal("Redis", problem.GetProperty("store").GetString());
        Assert.Equal(retryAfter, problem.GetProperty("retryAfter").GetInt64());
        Assert.EndsWith($"Nothing was changed; retry after {retryAfter} s.", problem.GetProperty("detail").GetString());
        Assert.Equal("p2", next.GetProperty("id").GetString());
    }

    private static async Task<LaharsubTestServer> StartAsync(string store)
    {
        if (store == "memory")
        {
            return await LaharsubTestServer.StartAsync();
        }
        var redis = await SharedRedis.GetAsync();
        var prefix = SharedRedis.UniquePrefix();
        return await LaharsubTestServer.StartAsync(services: services => services.AddLaharsub().AddRedis(o => { o.Configuration = redis.Configuration; o.KeyPrefix = prefix; }));
    }

    /// <summary>A socket following no topic: it gets only the answers to its frames.</summary>
    private static async Task<LaharsubSocket> OpenAsync(LaharsubTestServer server)
    {
        var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");
        return socket;
    }

    /// <summary>The messages of a <c>published</c> frame or REST answer: its <c>messages</c>, or itself for a publish to one topic.</summary>
    private static (long TopicId, long MessageId, string? Epoch)[] Messages(JsonElement answer) =>
        (answer.TryGetProperty("messages", out var messages) ? messages.EnumerateArray().ToArray() : [answer])
        .Select(m => (m.GetProperty("topicId").GetInt64(), m.GetProperty("messageId").GetInt64(), m.GetProperty("epoch").GetString())).ToArray();
}
