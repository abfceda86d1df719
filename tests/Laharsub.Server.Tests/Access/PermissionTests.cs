using System.Net;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Access;

/// <summary>What a valid token's laharsub claim allows, operation by operation; a refusal is 403 naming the operation and topic, and changes nothing.</summary>
public sealed class PermissionTests(JwtServerFixture fixture) : IClassFixture<JwtServerFixture>
{
    /// <summary>The topics each row works on: ids are assigned by the server, so rows name them by role.</summary>
    private sealed record Topics(long Orders, long Plain, long Other);

    public static TheoryData<string, string, string, HttpStatusCode> Rows => new()
    {
        // claim, operation, target (orders = a topic labelled orders-eu, plain = unlabelled, other = labelled news), expected
        { """{"publish":["*"]}""", "publish", "plain", HttpStatusCode.Created },
        { """{"publish":true}""", "publish", "plain", HttpStatusCode.Created },
        { """{"publish":false}""", "publish", "plain", HttpStatusCode.Forbidden },
        { """{"publish":["orders-*"]}""", "publish", "orders", HttpStatusCode.Created },
        { """{"publish":["orders-*"]}""", "publish", "plain", HttpStatusCode.Forbidden },
        { """{"publish":["orders-*"]}""", "publish", "other", HttpStatusCode.Forbidden },
        { """{"publish":["{plain}"]}""", "publish", "plain", HttpStatusCode.Created },
        { """{"publish":[{plain}]}""", "publish", "plain", HttpStatusCode.Created },
        { """{"publish":["{plain}-{other}"]}""", "publish", "plain", HttpStatusCode.Created },
        { """{"publish":["{other}-{other}"]}""", "publish", "plain", HttpStatusCode.Forbidden },
        { """{"subscribe":["*"]}""", "publish", "plain", HttpStatusCode.Forbidden },
        { """{}""", "publish", "plain", HttpStatusCode.Forbidden },
        { "(no claim)", "publish", "plain", HttpStatusCode.Forbidden },
        { "(no claim)", "subscribe", "plain", HttpStatusCode.Forbidden },
        { """ "{\"publish\":[\"*\"]}" """, "publish", "plain", HttpStatusCode.Created },
        { """{"subscribe":["orders-*"]}""", "subscribe", "orders", HttpStatusCode.OK },
        { """{"subscribe":["orders-*"]}""", "subscribe", "plain", HttpStatusCode.Forbidden },
        { """{"subscribe":["*-eu"]}""", "subscribe", "orders", HttpStatusCode.OK },
        { """{"delete":["orders-*"]}""", "delete", "orders", HttpStatusCode.NoContent },
        { """{"delete":["orders-*"]}""", "delete", "other", HttpStatusCode.Forbidden },
        { """{"subscribe":["*"],"publish":["*"]}""", "delete", "plain", HttpStatusCode.Forbidden },
        { """{"list":["orders-*"]}""", "info", "orders", HttpStatusCode.OK },
        { """{"subscribe":["{plain}"]}""", "info", "plain", HttpStatusCode.OK },
        { """{"publish":["*"]}""", "info", "plain", HttpStatusCode.Forbidden },
        { """{"create":true}""", "create", "plain", HttpStatusCode.Created },
        { """{"create":["orders-*"]}""", "create", "orders", HttpStatusCode.Created },
        { """{"create":["orders-*"]}""", "create", "plain", HttpStatusCode.Forbidden },
        { """{"create":["orders-*"]}""", "create", "other", HttpStatusCode.Forbidden },
        { """{"list":false}""", "list", "plain", HttpStatusCode.Forbidden },
        { """{"list":true}""", "list", "plain", HttpStatusCode.OK },
    };

    [Theory]
    [MemberData(nameof(Rows))]
    public async Task TheClaimDecidesEachOperation(string claim, string operation, string target, HttpStatusCode expected)
    {
        var topics = new Topics(
            await CreateAsync("orders-eu"), await fixture.Admin.CreateTopicAsync(), await CreateAsync("news"));
        var topicId = target switch { "orders" => topics.Orders, "other" => topics.Other, _ => topics.Plain };
        var label = target switch { "orders" => "orders-eu", "other" => "news", _ => null };
        var claimText = claim.Replace("{plain}", topics.Plain.ToString()).Replace("{other}", topics.Other.ToString());
        var token = claim == "(no claim)" ? TestTokens.Hs256(TestTokens.Payload(null)) : TestTokens.Grant(claimText);
        var topicsBefore = await CountTopicsAsync();

        using var request = operation switch
        {
            "publish" => TestTokens.Request(HttpMethod.Post, $"topics/{topicId}", token, new StringContent("hello", Encoding.UTF8, "text/plain")),
            "subscribe" => TestTokens.Request(HttpMethod.Get, $"subscriptions?topics={topicId}:1&timeout=0", token),
            "delete" => TestTokens.Request(HttpMethod.Delete, $"topics/{topicId}", token),
            "info" => TestTokens.Request(HttpMethod.Get, $"topics/{topicId}", token),
            "list" => TestTokens.Request(HttpMethod.Get, "topics", token),
            _ => TestTokens.Request(HttpMethod.Post, "topics", token,
                label is null ? null : new StringContent($$"""{"label":"{{label}}"}""", Encoding.UTF8, "application/json")),
        };
        using var response = await fixture.Anonymous.SendAsync(request).WaitAsync(WireClient.Bound);
        var body = await response.Content.ReadAsStringAsync();

        Assert.True(expected == response.StatusCode || (expected == HttpStatusCode.OK && response.StatusCode == HttpStatusCode.NoContent && operation == "subscribe"),
            $"{claim} {operation} {target}: expected {(int)expected}, got {(int)response.StatusCode} {body}");
        if (expected != HttpStatusCode.Forbidden)
        {
            return;
        }
        var problem = TestTokens.ParseJson(body);
        Assert.Equal(operation == "info" ? "list" : operation, problem.GetProperty("operation").GetString());
        if (operation is not ("create" or "list"))
        {
            Assert.Equal(topicId, problem.GetProperty("topicId").GetInt64());
            Assert.Contains($"topic {topicId}", problem.GetProperty("detail").GetString());
        }
        // Nothing changed: no message, no deletion, no new topic.
        var info = await fixture.Admin.GetTopicAsync(topicId);
        Assert.Equal(0, info.GetProperty("lastMessageId").GetInt64());
        Assert.Equal(topicsBefore, await CountTopicsAsync());
    }

    [Fact]
    public async Task APollWithOneForbiddenTopicIsRefusedWholeNamingThatTopic()
    {
        var allowed = await CreateAsync("orders-eu");
        var forbidden = await CreateAsync("payroll");
        var alsoForbidden = await fixture.Admin.CreateTopicAsync();
        await fixture.Admin.PublishTextAsync(allowed, "visible");
        var token = TestTokens.Grant("""{"subscribe":["orders-*"]}""");

        using var refused = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Get,
            $"subscriptions?topics={allowed}:1,{forbidden}:1,{alsoForbidden}:1&timeout=0", token)).WaitAsync(WireClient.Bound);
        var problem = TestTokens.ParseJson(await refused.Content.ReadAsStringAsync());
        var alone = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Get, $"subscriptions?topics={allowed}:1&timeout=0", token)).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Forbidden, refused.StatusCode);
        Assert.Equal(forbidden, problem.GetProperty("topicId").GetInt64());
        Assert.Equal("subscribe", problem.GetProperty("operation").GetString());
        Assert.Contains($"subscribe to topic {forbidden}", problem.GetProperty("detail").GetString());
        Assert.Equal(HttpStatusCode.OK, alone.StatusCode);
        Assert.Contains("visible", await alone.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task APublishToSeveralTopicsNeedsPublishOnEveryOneAndIsRefusedWholeNamingTheFirstForbidden()
    {
        var allowed = await CreateAsync("orders-eu");
        var forbidden = await CreateAsync("payroll");
        var token = TestTokens.Grant("""{"publish":["orders-*"]}""");

        using var refused = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Post,
            $"topics/publish?topics={allowed},{forbidden}", token, new StringContent("x"))).WaitAsync(WireClient.Bound);
        var problem = TestTokens.ParseJson(await refused.Content.ReadAsStringAsync());
        using var alone = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Post,
            $"topics/publish?topics={allowed}", token, new StringContent("x"))).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Forbidden, refused.StatusCode);
        Assert.Equal((forbidden, "publish"), (problem.GetProperty("topicId").GetInt64(), problem.GetProperty("operation").GetString()));
        Assert.Equal(HttpStatusCode.Created, alone.StatusCode);
        Assert.Equal(1, (await fixture.Admin.GetTopicAsync(allowed)).GetProperty("lastMessageId").GetInt64());
        Assert.Equal(0, (await fixture.Admin.GetTopicAsync(forbidden)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task APollInTheIndexedFormIsCheckedToo()
    {
        var allowed = await fixture.Admin.CreateTopicAsync();
        var forbidden = await fixture.Admin.CreateTopicAsync();
        var token = TestTokens.Grant($$"""{"subscribe":["{{allowed}}"]}""");

        using var response = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Get,
            $"subscriptions?subs%5B0%5D%5Btopicid%5D={allowed}&subs%5B1%5D%5Btopicid%5D={forbidden}&timeout=0", token)).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Forbidden, response.StatusCode);
        Assert.Equal(forbidden, TestTokens.ParseJson(await response.Content.ReadAsStringAsync()).GetProperty("topicId").GetInt64());
    }

    [Fact]
    public async Task AForbiddenTopicThatDoesNotExistIsForbiddenNotNotFound()
    {
        // Otherwise a token could probe which topics exist.
        var token = TestTokens.Grant("""{"subscribe":["orders-*"],"publish":["orders-*"]}""");

        using var poll = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Get, "subscriptions?topics=999999&timeout=0", token)).WaitAsync(WireClient.Bound);
        using var publish = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Post, "topics/999999", token, new StringContent("x"))).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.Forbidden, poll.StatusCode);
        Assert.Equal(HttpStatusCode.Forbidden, publish.StatusCode);
    }

    [Fact]
    public async Task BadInputFromAnAllowedCallerIsStill400()
    {
        var token = TestTokens.Grant("""{"subscribe":["orders-*"],"create":["orders-*"]}""");

        using var poll = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Get, "subscriptions?topics=abc", token)).WaitAsync(WireClient.Bound);
        using var create = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Post, "topics", token,
            new StringContent("""{"label":"9lives"}""", Encoding.UTF8, "application/json"))).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.BadRequest, poll.StatusCode);
        Assert.Equal(HttpStatusCode.BadRequest, create.StatusCode);
        Assert.Contains("label", await create.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task AListingShowsOnlyTheTopicsTheTokenMayList()
    {
        var orders = await CreateAsync("orders-eu");
        var news = await CreateAsync("news");
        var token = TestTokens.Grant("""{"list":["orders-*"]}""");

        using var response = await fixture.Anonymous.SendAsync(TestTokens.Request(HttpMethod.Get, $"topics?after={orders - 1}", token)).WaitAsync(WireClient.Bound);
        var page = TestTokens.ParseJson(await response.Content.ReadAsStringAsync());

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var ids = page.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()).ToList();
        Assert.Contains(orders, ids);
        Assert.DoesNotContain(news, ids);
        Assert.All(page.GetProperty("topics").EnumerateArray(), t => Assert.StartsWith("orders-", t.GetProperty("label").GetString()));
    }

    private async Task<long> CreateAsync(string label)
    {
        using var response = await fixture.Admin.PostAsync("topics", new StringContent($$"""{"label":"{{label}}"}""", Encoding.UTF8, "application/json")).WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        return TestTokens.ParseJson(await response.Content.ReadAsStringAsync()).GetProperty("topicId").GetInt64();
    }

    private async Task<int> CountTopicsAsync()
    {
        var count = 0;
        string? next = "topics?limit=1000";
        while (next is not null)
        {
            var page = TestTokens.ParseJson(await fixture.Admin.GetStringAsync(next).WaitAsync(WireClient.Bound));
            count += page.GetProperty("topics").GetArrayLength();
            next = page.TryGetProperty("next", out var link) ? link.GetString() : null;
        }
        return count;
    }
}
