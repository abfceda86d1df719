using System.Net.Http.Headers;
using System.Text;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// Jwt mode on the fast path: a token the pipeline has validated once, and an anonymous caller, are served below
/// the pipeline with the pipeline's decisions and bytes; a refusal (a forbidden topic, a missing grant) and a token
/// not validated yet are the pipeline's, request by request.
/// </summary>
public sealed partial class FastPathTests
{
    /// <summary>Publish and subscribe on topics labelled <c>orders-*</c> (a label pattern: each topic is looked up).</summary>
    private const string OrdersClaim = """{"publish":["orders-*"],"subscribe":["orders-*"]}""";

    [Fact]
    public Task TheFastPathAnswersTokensAsThePipelineDoes() => AssertSameAnswersAsync(JwtAnswersAsync);

    private static async Task<string[]> JwtAnswersAsync(bool fastPath)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(anonymous: "subscribe:orders-*",
            (StandaloneHost.FastPathSetting, fastPath ? "true" : "false")));
        using var admin = server.CreateClient();
        admin.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", TestTokens.Grant("""{"create":true,"subscribe":true}""", subject: "admin"));
        var orders = await CreateLabelledAsync(admin, "orders-eu");
        var other = await CreateLabelledAsync(admin, "news");
        var token = TestTokens.Grant(OrdersClaim);
        using var counter = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        var answers = new List<string>();

        using (var withToken = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            string[] requests =
            [
                // The token's first request: the pipeline validates it (and remembers it).
                Post($"/ps/topics/{orders}", "text/plain", "first"),
                Post($"/ps/topics/{orders}", "text/plain", "second"),
                Keyed(Post($"/ps/topics/{orders}", "text/plain", "keyed"), "\"5a0e4c1e-57a4-4a53-8f0e-2b1f0c7f4a11\""),
                Get($"/ps/subscriptions?topics={orders}:1"),
                Get($"/ps/subscriptions?subs[0][topicid]={orders}&subs[0][from]=2"),
                // Nothing after the third message: the poll's timeout, a 204.
                Get($"/ps/subscriptions?topics={orders}:4&timeout=0"),
                // Refused whole, naming the forbidden topic (403), and nothing stored.
                Get($"/ps/subscriptions?topics={orders}:1,{other}:1"),
                Post($"/ps/topics/{other}", "text/plain", "forbidden"),
            ];
            foreach (var request in requests)
            {
                answers.Add(await AnswerAsync(withToken, request.Replace("Host: test\r\n", $"Host: test\r\nAuthorization: Bearer {token}\r\n", StringComparison.Ordinal), timeout.Token));
            }
        }
        using (var anonymous = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            // Anonymous callers may subscribe to orders-* here, and nothing more (401 with a challenge).
            answers.Add(await AnswerAsync(anonymous, Get($"/ps/subscriptions?topics={orders}:1&timeout=0"), timeout.Token));
            answers.Add(await AnswerAsync(anonymous, Post($"/ps/topics/{orders}", "text/plain", "anonymous"), timeout.Token));
            answers.Add(await AnswerAsync(anonymous, Get($"/ps/subscriptions?topics={other}:1&timeout=0"), timeout.Token));
            answers.Add(await AnswerAsync(anonymous,
                Get($"/ps/subscriptions?topics={orders}:1").Replace("Host: test\r\n", "Host: test\r\nAuthorization: Bearer not-a-token\r\n", StringComparison.Ordinal), timeout.Token));
        }
        Assert.Equal(fastPath ? 4 : 0, counter.Count("poll"));
        Assert.Equal(fastPath ? 2 : 0, counter.Count("publish"));
        Assert.Equal(fastPath ? 4 : 0, counter.Count("pipeline", "access_refused"));
        Assert.Equal(fastPath ? 2 : 0, counter.Count("pipeline", "token_unvalidated"));
        // What was stored: the three allowed publishes, none of the refused ones.
        answers.Add(string.Join(",", (await admin.PollAsync($"topics={orders}:1,{other}:1&timeout=0")).Messages.Select(message => message.Text)));
        return [.. answers];
    }

    /// <summary>
    /// An event stream and a WebSocket opened with a token in the query (as a browser opens them) or in
    /// <c>Authorization</c> (as a service opens them) run on the fast path as on the pipeline: the same <c>200</c> or
    /// <c>101</c>, the same events and frames, the grants applied to a socket's publish frames; an upgrade naming a
    /// topic the token may not follow gets the pipeline's 403.
    /// </summary>
    [Fact]
    public Task TheFastPathStreamsToATokenAsThePipelineDoes() => AssertSameAnswersAsync(JwtStreamAnswersAsync);

    private static async Task<string[]> JwtStreamAnswersAsync(bool fastPath)
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: TestTokens.JwtSettings(more: (StandaloneHost.FastPathSetting, fastPath ? "true" : "false")));
        using var client = server.CreateClient();
        var token = TestTokens.Grant("""{"create":true,"publish":["orders-*"],"subscribe":["orders-*"]}""");
        client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", token);
        var orders = await CreateLabelledAsync(client, "orders-eu");
        var other = await CreateLabelledAsync(client, "news");
        await client.PublishTextAsync(orders, "one");
        using var counter = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        var answers = new List<string>();

        using (var stream = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            await stream.SendAsync(Get($"/ps/subscriptions?topics={orders}:1&access_token={token}", "text/event-stream"), timeout.Token);
            answers.Add(await stream.ReadThroughAsync("\"body\":\"one\"}\n\n\r\n", timeout.Token));
        }
        using (var socket = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            await socket.SendAsync(Upgrade($"/ps/subscriptions?topics={orders}:1&access_token={token}", ""), timeout.Token);
            answers.Add(await socket.ReadThroughAsync("\"body\":\"one\"}}", timeout.Token));
            await socket.SendAsync(MaskedFrame(0x1, Encoding.UTF8.GetBytes($"{{\"type\":\"publish\",\"id\":\"no\",\"topicId\":{other},\"body\":\"x\"}}")), timeout.Token);
            answers.Add(await socket.ReadThroughAsync("\"id\":\"no\"", timeout.Token));
            await socket.SendAsync(MaskedFrame(0x1, Encoding.UTF8.GetBytes($"{{\"type\":\"publish\",\"id\":\"yes\",\"topicId\":{orders},\"body\":\"two\"}}")), timeout.Token);
            answers.Add(await socket.ReadThroughAsync("\"body\":\"two\"}}", timeout.Token));
        }

        var bearer = $"Authorization: Bearer {token}\r\n";
        using (var stream = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            await stream.SendAsync(Get($"/ps/subscriptions?topics={orders}:1", "text/event-stream").Replace("Host: test\r\n", "Host: test\r\n" + bearer, StringComparison.Ordinal),
                timeout.Token);
            answers.Add(await stream.ReadThroughAsync("\"body\":\"two\"}\n\n\r\n", timeout.Token));
        }
        using (var socket = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            await socket.SendAsync(Upgrade($"/ps/subscriptions?topics={orders}:1", bearer + "Sec-WebSocket-Protocol: laharsub.v1\r\n"), timeout.Token);
            answers.Add(await socket.ReadThroughAsync("\"body\":\"two\"}}", timeout.Token));
        }
        using (var refused = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token))
        {
            answers.Add(await AnswerAsync(refused, Upgrade($"/ps/subscriptions?topics={other}:1", bearer), timeout.Token));
        }

        Assert.Equal(fastPath ? 2 : 0, counter.Count("stream"));
        Assert.Equal(fastPath ? 2 : 0, counter.Count("websocket"));
        return [.. answers.Select(answer => ChunkSizePattern().Replace(DatePattern().Replace(Normalized(answer), "Date: <varies>"), "\r\n<chunk size>\r\n"))];
    }

    /// <summary>
    /// A page (Origin, with the default policy that allows any origin) with a token the server has not validated yet:
    /// its first request is the pipeline's, and only that one; the connection's later publishes and polls are the
    /// fast path's (before, Origin made the first such request give the pipeline the whole connection).
    /// </summary>
    [Fact]
    public async Task APagesFreshTokenGivesThePipelineItsFirstRequestOnly()
    {
        await using var server = await StartFastAsync(TestTokens.JwtSettings());
        using var admin = server.CreateClient();
        admin.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", TestTokens.Grant("""{"create":true}""", subject: "admin"));
        var topic = await CreateLabelledAsync(admin, "page");
        using var counter = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        using var page = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        var headers = $"Host: test\r\nOrigin: https://app.example\r\nAuthorization: Bearer {TestTokens.Grant("""{"publish":true,"subscribe":true}""")}\r\n";
        string FromPage(string request) => request.Replace("Host: test\r\n", headers, StringComparison.Ordinal);

        var first = await ExchangeAsync(page, FromPage(Get($"/ps/subscriptions?topics={topic}:1&timeout=0")), timeout.Token);
        var published = await ExchangeAsync(page, FromPage(Post($"/ps/topics/{topic}", "text/plain", "hi")), timeout.Token);
        var polled = await ExchangeAsync(page, FromPage(Get($"/ps/subscriptions?topics={topic}:1")), timeout.Token);

        Assert.Equal([204, 201, 200], new[] { first.Status, published.Status, polled.Status });
        Assert.Equal(1, counter.Count("pipeline", "token_unvalidated"));
        Assert.Equal(0, counter.Count("handed_over"));
        Assert.Equal(1, counter.Count("publish"));
        Assert.Equal(1, counter.Count("poll"));
    }

    private static async Task<long> CreateLabelledAsync(HttpClient client, string label)
    {
        using var response = await client.PostAsync("topics", new StringContent($$"""{"label":"{{label}}"}""", Encoding.UTF8, "application/json")).WaitAsync(Bound);
        Assert.Equal(System.Net.HttpStatusCode.Created, response.StatusCode);
        return TestTokens.ParseJson(await response.Content.ReadAsStringAsync()).GetProperty("topicId").GetInt64();
    }

    /// <summary>An answer with what differs between any two (date, epoch, trace id) and the framing of problems (length or chunks) left out.</summary>
    private static async Task<string> AnswerAsync(RawConnection connection, string request, CancellationToken cancellationToken)
    {
        var answer = await ExchangeAsync(connection, request, cancellationToken);
        var headers = answer.Head.Split("\r\n")
            .Where(line => !line.StartsWith("Date:", StringComparison.Ordinal)
                && !(answer.Status >= 400 && (line.StartsWith("Content-Length:", StringComparison.Ordinal) || line.StartsWith("Transfer-Encoding:", StringComparison.Ordinal))));
        return Normalized(string.Join("\n", headers) + "\n\n" + answer.BodyText);
    }
}
