using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.State;

/// <summary>State topics over REST: creating, reading the document with its ETag, patching, replacing, compare-and-set, and every refusal changing nothing.</summary>
public sealed class StateTopicTests
{
    private const string Patch = "application/merge-patch+json";

    [Fact]
    public async Task AStateTopicSaysSoAndStartsAsAnEmptyObjectAtVersionZero()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();

        var (topic, epoch, created) = await CreateStateTopicAsync(client, """{"state":true,"label":"prices"}""");
        var plain = await client.CreateTopicAsync();
        var (status, tag, document) = await GetStateAsync(client, topic);

        Assert.True(created.GetProperty("state").GetBoolean());
        Assert.True((await client.GetTopicAsync(topic)).GetProperty("state").GetBoolean());
        Assert.False((await client.GetTopicAsync(plain)).TryGetProperty("state", out _));
        Assert.Equal((HttpStatusCode.OK, $"\"{epoch}:0\"", "{}"), (status, tag, document));
    }

    [Fact]
    public async Task APatchChangesTheDocumentAndItsVersionAndIfNoneMatchAnswers304()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);

        using var first = await SendAsync(client, HttpMethod.Post, $"topics/{topic}", """{"bid":1.5,"venue":{"name":"X"}}""", Patch);
        using var second = await SendAsync(client, HttpMethod.Post, $"topics/{topic}", """{"venue":{"open":true},"bid":null}""", Patch);
        var (_, tag, document) = await GetStateAsync(client, topic);
        using var notModified = new HttpRequestMessage(HttpMethod.Get, $"topics/{topic}/state");
        notModified.Headers.IfNoneMatch.Add(new EntityTagHeaderValue($"\"{epoch}:2\""));
        using var notModifiedAnswer = await client.SendAsync(notModified).WaitAsync(WireClient.Bound);
        using var head = await client.SendAsync(new HttpRequestMessage(HttpMethod.Head, $"topics/{topic}/state")).WaitAsync(WireClient.Bound);

        Assert.Equal((HttpStatusCode.Created, $"\"{epoch}:1\""), (first.StatusCode, first.Headers.ETag?.ToString()));
        Assert.Equal(2, JsonDocument.Parse(await second.Content.ReadAsStringAsync()).RootElement.GetProperty("messageId").GetInt64());
        Assert.Equal($"\"{epoch}:2\"", tag);
        AssertJson("""{"venue":{"name":"X","open":true}}""", document);
        Assert.Equal(HttpStatusCode.NotModified, notModifiedAnswer.StatusCode);
        Assert.Equal((HttpStatusCode.OK, $"\"{epoch}:2\""), (head.StatusCode, head.Headers.ETag?.ToString()));
    }

    [Fact]
    public async Task TheStateOfATopicWithoutStateIsA404ThatSaysSo()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var plain = await client.CreateTopicAsync();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, $"topics/{plain}/state"));
        var (unknownStatus, unknown) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, $"topics/{plain + 100}/state"));
        var (putStatus, put) = await client.SendForProblemAsync(Request(HttpMethod.Put, $"topics/{plain}/state", """{"a":1}""", "application/json"));

        Assert.Equal(HttpStatusCode.NotFound, status);
        Assert.EndsWith(":not-a-state-topic", problem.GetProperty("type").GetString());
        Assert.Contains("exists but holds no state", problem.GetProperty("detail").GetString());
        Assert.Equal(HttpStatusCode.NotFound, unknownStatus);
        Assert.DoesNotContain("not-a-state-topic", unknown.GetProperty("type").GetString() ?? "");
        Assert.Equal(HttpStatusCode.NotFound, putStatus);
        Assert.EndsWith(":not-a-state-topic", put.GetProperty("type").GetString());
    }

    public static TheoryData<string, string, HttpStatusCode, string> Refusals => new()
    {
        { """{"a":2}""", "application/json", HttpStatusCode.UnsupportedMediaType, "Content-Type" },
        { "hello", "text/plain", HttpStatusCode.UnsupportedMediaType, "Content-Type" },
        { "[1,2]", Patch, HttpStatusCode.BadRequest, "body" },
        { "{\"a\":", Patch, HttpStatusCode.BadRequest, "body" },
        { """{"a":1,"a":2}""", Patch, HttpStatusCode.BadRequest, "body" },
        { new string('[', 100) + new string(']', 100), Patch, HttpStatusCode.BadRequest, "body" },
        { "{\"a\":" + new string('{', 70) + new string('}', 70) + "}", Patch, HttpStatusCode.BadRequest, "body" },
        { $$"""{"big":"{{new string('x', 300)}}"}""", Patch, HttpStatusCode.RequestEntityTooLarge, "body" },
    };

    [Theory]
    [MemberData(nameof(Refusals))]
    public async Task ARefusedPatchNamesTheFieldAndChangesNothing(string body, string contentType, HttpStatusCode expected, string field)
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxStateBytes = 200);
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        using var seeded = await SendAsync(client, HttpMethod.Post, $"topics/{topic}", """{"a":1}""", Patch);

        var (status, problem) = await client.SendForProblemAsync(Request(HttpMethod.Post, $"topics/{topic}", body, contentType));
        var (_, tag, document) = await GetStateAsync(client, topic);

        Assert.Equal(expected, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty(field, out _), $"the problem names {field}: {problem}");
        Assert.Equal($"\"{epoch}:1\"", tag);
        AssertJson("""{"a":1}""", document);
        Assert.Equal(1, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Theory]
    [InlineData(new byte[] { (byte)'{', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'"', 0xff, 0xfe, (byte)'"', (byte)'}' })]
    [InlineData(new byte[] { (byte)'{', (byte)'"', (byte)'a', (byte)'"', (byte)':', (byte)'"', (byte)'\\', (byte)'u', (byte)'d', (byte)'8', (byte)'0', (byte)'0', (byte)'"', (byte)'}' })]
    public async Task TextThatIsNotUnicodeIsA400NamingBodyForAPatchAndAReplacement(byte[] body)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);

        var statuses = new List<HttpStatusCode>();
        foreach (var (method, uri, contentType) in new[] { (HttpMethod.Post, $"topics/{topic}", Patch), (HttpMethod.Put, $"topics/{topic}/state", "application/json") })
        {
            var request = new HttpRequestMessage(method, uri) { Content = new ByteArrayContent(body) };
            request.Content.Headers.ContentType = MediaTypeHeaderValue.Parse(contentType);
            var (status, problem) = await client.SendForProblemAsync(request);
            Assert.True(problem.GetProperty("errors").TryGetProperty("body", out _), problem.ToString());
            statuses.Add(status);
        }
        var (_, tag, document) = await GetStateAsync(client, topic);

        Assert.Equal([HttpStatusCode.BadRequest, HttpStatusCode.BadRequest], statuses);
        Assert.Equal(($"\"{epoch}:0\"", "{}"), (tag, document));
    }

    [Fact]
    public async Task ATooLargeDocumentNamesTheLimit()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxStateBytes = 100);
        using var client = server.CreateClient();
        var (topic, _, _) = await CreateStateTopicAsync(client);

        var (status, problem) = await client.SendForProblemAsync(Request(HttpMethod.Put, $"topics/{topic}/state", $$"""{"big":"{{new string('x', 100)}}"}""", "application/json"));

        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, status);
        Assert.Equal(100, problem.GetProperty("maxStateBytes").GetInt32());
        Assert.Contains("100 bytes", problem.GetProperty("detail").GetString());
    }

    [Fact]
    public async Task PutReplacesTheDocumentAndIfMatchWithAVersionIsACompareAndSet()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        using var seeded = await SendAsync(client, HttpMethod.Post, $"topics/{topic}", """{"a":1}""", Patch);

        var put = Request(HttpMethod.Put, $"topics/{topic}/state", """{ "b" : [1, {}], "n" : 123456789012345678901234567890 }""", "application/json");
        put.Headers.IfMatch.Add(new EntityTagHeaderValue($"\"{epoch}:1\""));
        using var replaced = await client.SendAsync(put).WaitAsync(WireClient.Bound);
        var stale = Request(HttpMethod.Post, $"topics/{topic}", """{"c":1}""", Patch);
        stale.Headers.IfMatch.Add(new EntityTagHeaderValue($"\"{epoch}:1\""));
        var (staleStatus, problem) = await client.SendForProblemAsync(stale);
        var fresh = Request(HttpMethod.Post, $"topics/{topic}", """{"c":1}""", Patch);
        fresh.Headers.IfMatch.Add(new EntityTagHeaderValue($"\"{epoch}:2\""));
        using var freshAnswer = await client.SendAsync(fresh).WaitAsync(WireClient.Bound);
        var (_, tag, document) = await GetStateAsync(client, topic);
        var poll = await client.PollAsync($"topics={topic}:2");

        Assert.Equal((HttpStatusCode.OK, $"\"{epoch}:2\""), (replaced.StatusCode, replaced.Headers.ETag?.ToString()));
        Assert.Equal(HttpStatusCode.PreconditionFailed, staleStatus);
        Assert.Equal((epoch, 2L), (problem.GetProperty("epoch").GetString(), problem.GetProperty("version").GetInt64()));
        Assert.Equal(HttpStatusCode.Created, freshAnswer.StatusCode);
        Assert.Equal($"\"{epoch}:3\"", tag);
        Assert.Equal("""{"b":[1,{}],"n":123456789012345678901234567890,"c":1}""", document);
        Assert.Equal(("application/json", """{"b":[1,{}],"n":123456789012345678901234567890}"""), (poll.Messages[0].ContentType, poll.Messages[0].Text));
        Assert.Equal((Patch, """{"c":1}"""), (poll.Messages[1].ContentType, poll.Messages[1].Text));
    }

    [Fact]
    public async Task PutRefusesAnotherContentTypeAndABadIfMatch()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _, _) = await CreateStateTopicAsync(client);

        var (mediaStatus, media) = await client.SendForProblemAsync(Request(HttpMethod.Put, $"topics/{topic}/state", """{"a":1}""", Patch));
        var badTag = Request(HttpMethod.Put, $"topics/{topic}/state", """{"a":1}""", "application/json");
        badTag.Headers.TryAddWithoutValidation("If-Match", "\"0123456789abcdef:x\"");
        var (tagStatus, tagProblem) = await client.SendForProblemAsync(badTag);

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, mediaStatus);
        Assert.True(media.GetProperty("errors").TryGetProperty("Content-Type", out _));
        Assert.Equal(HttpStatusCode.BadRequest, tagStatus);
        Assert.True(tagProblem.GetProperty("errors").TryGetProperty("If-Match", out _));
        Assert.Equal(0, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task APatchToSeveralTopicsPatchesTheStateTopicsAndIsAMessageOnTheOthers()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (state, _, _) = await CreateStateTopicAsync(client);
        var plain = await client.CreateTopicAsync();

        using var answer = await SendAsync(client, HttpMethod.Post, $"topics/publish?topics={state},{plain}", """{"x":1}""", Patch);
        var (_, _, document) = await GetStateAsync(client, state);
        var poll = await client.PollAsync($"topics={plain}:1");
        var (refusedStatus, _) = await client.SendForProblemAsync(Request(HttpMethod.Post, $"topics/publish?topics={plain},{state}", "hello", "text/plain"));

        Assert.Equal(HttpStatusCode.Created, answer.StatusCode);
        AssertJson("""{"x":1}""", document);
        Assert.Equal((Patch, """{"x":1}"""), (poll.Messages[0].ContentType, poll.Messages[0].Text));
        Assert.Equal(HttpStatusCode.UnsupportedMediaType, refusedStatus);
        Assert.Equal(1, (await client.GetTopicAsync(plain)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task AnIdempotencyKeyOnAPutStoresTheDocumentOnce()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, _, _) = await CreateStateTopicAsync(client);

        var ids = new List<long>();
        for (var i = 0; i < 2; i++)
        {
            var put = Request(HttpMethod.Put, $"topics/{topic}/state", """{"a":1}""", "application/json");
            put.Headers.Add("Idempotency-Key", "put-once");
            using var answer = await client.SendAsync(put).WaitAsync(WireClient.Bound);
            Assert.Equal(HttpStatusCode.OK, answer.StatusCode);
            ids.Add(JsonDocument.Parse(await answer.Content.ReadAsStringAsync()).RootElement.GetProperty("messageId").GetInt64());
        }

        Assert.Equal([1L, 1L], ids);
        Assert.Equal(1, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    internal static async Task<(long TopicId, string Epoch, JsonElement Created)> CreateStateTopicAsync(HttpClient client, string body = """{"state":true}""")
    {
        using var response = await client.PostAsync("topics", new StringContent(body, Encoding.UTF8, "application/json")).WaitAsync(WireClient.Bound);
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.Created, $"creating a state topic answered {(int)response.StatusCode}: {text}");
        var created = JsonDocument.Parse(text).RootElement.Clone();
        return (created.GetProperty("topicId").GetInt64(), created.GetProperty("epoch").GetString()!, created);
    }

    internal static async Task<(HttpStatusCode Status, string? ETag, string Document)> GetStateAsync(HttpClient client, long topicId)
    {
        using var response = await client.GetAsync($"topics/{topicId}/state").WaitAsync(WireClient.Bound);
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"GET state answered {(int)response.StatusCode}: {text}");
        Assert.Equal("application/json", response.Content.Headers.ContentType?.MediaType);
        return (response.StatusCode, response.Headers.ETag?.ToString(), text);
    }

    internal static HttpRequestMessage Request(HttpMethod method, string uri, string body, string contentType) =>
        new(method, uri) { Content = new StringContent(body, Encoding.UTF8, MediaTypeHeaderValue.Parse(contentType)) };

    internal static async Task<HttpResponseMessage> SendAsync(HttpClient client, HttpMethod method, string uri, string body, string contentType)
    {
        var response = await client.SendAsync(Request(method, uri, body, contentType)).WaitAsync(WireClient.Bound);
        Assert.True(response.IsSuccessStatusCode, $"{method} {uri} answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
        return response;
    }

    internal static void AssertJson(string expected, string actual) =>
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse(expected), JsonNode.Parse(actual)), $"expected {expected}, got {actual}");
}
