using System.Net;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Access;

/// <summary>Laharsub:Auth:Anonymous: what requests without a token may do in Jwt mode.</summary>
public sealed class AnonymousAccessTests
{
    public static TheoryData<string, string, HttpStatusCode> Rows => new()
    {
        // Laharsub:Auth:Anonymous, request, expected answer to a request without a token
        { "", "subscribe", HttpStatusCode.Unauthorized },
        { "", "list", HttpStatusCode.Unauthorized },
        { "", "publish", HttpStatusCode.Unauthorized },
        { "subscribe,list", "subscribe", HttpStatusCode.OK },
        { "subscribe,list", "list", HttpStatusCode.OK },
        { "subscribe,list", "info", HttpStatusCode.OK },
        { "subscribe,list", "publish", HttpStatusCode.Unauthorized },
        { "subscribe,list", "delete", HttpStatusCode.Unauthorized },
        { "subscribe,list", "create", HttpStatusCode.Unauthorized },
        { "subscribe:news-*", "subscribe", HttpStatusCode.OK },
        { "subscribe:orders-*", "subscribe", HttpStatusCode.Unauthorized },
        { "publish", "publish", HttpStatusCode.Created },
    };

    [Theory]
    [MemberData(nameof(Rows))]
    public async Task AnonymousRequestsMayDoWhatTheSettingAllowsAndNoMore(string anonymous, string operation, HttpStatusCode expected)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(anonymous));
        using var admin = server.CreateClient();
        admin.DefaultRequestHeaders.Authorization = new("Bearer", TestTokens.Grant(JwtServerFixture.Everything, "admin"));
        using var anonymousClient = server.CreateClient();
        var topic = await CreateLabelledAsync(admin, "news-daily");
        await admin.PublishTextAsync(topic, "headline");

        using var response = await anonymousClient.SendAsync(operation switch
        {
            "subscribe" => new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}:1&timeout=0"),
            "list" => new HttpRequestMessage(HttpMethod.Get, "topics"),
            "info" => new HttpRequestMessage(HttpMethod.Get, $"topics/{topic}"),
            "publish" => new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new StringContent("spam", Encoding.UTF8, "text/plain") },
            "delete" => new HttpRequestMessage(HttpMethod.Delete, $"topics/{topic}"),
            _ => new HttpRequestMessage(HttpMethod.Post, "topics"),
        }).WaitAsync(WireClient.Bound);
        var body = await response.Content.ReadAsStringAsync();

        Assert.True(expected == response.StatusCode, $"Anonymous={anonymous} {operation}: expected {(int)expected}, got {(int)response.StatusCode} {body}");
        if (expected == HttpStatusCode.Unauthorized)
        {
            Assert.Equal("Bearer", Assert.Single(response.Headers.WwwAuthenticate).Scheme);
            var problem = TestTokens.ParseJson(body);
            Assert.Equal("Token required", problem.GetProperty("title").GetString());
            Assert.Contains("Authorization: Bearer", problem.GetProperty("detail").GetString());
            var info = await admin.GetTopicAsync(topic);
            Assert.Equal(1, info.GetProperty("lastMessageId").GetInt64());
            var listing = TestTokens.ParseJson(await admin.GetStringAsync("topics").WaitAsync(WireClient.Bound));
            Assert.Equal([topic], listing.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()));
        }
        if (operation == "subscribe" && expected == HttpStatusCode.OK)
        {
            Assert.Contains("headline", body);
        }
    }

    [Fact]
    public async Task ATokenMayDoWhatAnonymousCallersMayAndWhatItGrants()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings("subscribe"));
        using var client = server.CreateClient();
        client.DefaultRequestHeaders.Authorization = new("Bearer", TestTokens.Grant("""{"create":true,"publish":true}"""));
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "mine");

        var poll = await client.PollAsync($"topics={topic}:1&timeout=0");

        Assert.Equal(["mine"], poll.Messages.Select(m => m.Text));
    }

    /// <summary>A body whose text is not Unicode is bad input for anyone, answered before any token is asked for; never a 500 or a logged error.</summary>
    [Theory]
    [InlineData("""{"label":"\ud800"}""", "label")]
    [InlineData("""{"\ud800":1}""", "body")]
    public async Task ATopicDescriptionThatIsNotUnicodeIs400ForAnAnonymousCaller(string body, string field)
    {
        var logs = new Support.LogRecorder();
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(""),
            services: s => s.AddSingleton<Microsoft.Extensions.Logging.ILoggerProvider>(logs));
        using var anonymousClient = server.CreateClient();
        using var admin = server.CreateClient();
        admin.DefaultRequestHeaders.Authorization = new("Bearer", TestTokens.Grant(JwtServerFixture.Everything, "admin"));

        var (status, problem) = await anonymousClient.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, "topics")
        {
            Content = new StringContent(body, Encoding.UTF8, "application/json"),
        });

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty(field, out _), problem.ToString());
        var listing = TestTokens.ParseJson(await admin.GetStringAsync("topics").WaitAsync(WireClient.Bound));
        Assert.Empty(listing.GetProperty("topics").EnumerateArray());
        Assert.DoesNotContain(logs.Entries, entry => entry.Level >= Microsoft.Extensions.Logging.LogLevel.Error || entry.Exception is not null);
    }

    private static async Task<long> CreateLabelledAsync(HttpClient admin, string label)
    {
        using var response = await admin.PostAsync("topics", new StringContent($$"""{"label":"{{label}}"}""", Encoding.UTF8, "application/json")).WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        return TestTokens.ParseJson(await response.Content.ReadAsStringAsync()).GetProperty("topicId").GetInt64();
    }
}
