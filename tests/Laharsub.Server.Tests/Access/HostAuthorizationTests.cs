using System.Net;
using System.Net.Http.Headers;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Access;
using Laharsub.Server.Hosting;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Logging;
using Laharsub.Server.Storage;
using Laharsub.Server.Tests.Support;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Access;

/// <summary>
/// Host mode: an application that embeds Laharsub decides with its own users (cookie authentication) and an ordinary
/// <c>AuthorizationHandler&lt;LaharsubRequirement, LaharsubTopic&gt;</c> ("a user may use the topics labelled with their
/// name"). Every operation through every route is tried as an allowed user, a denied user and an anonymous caller,
/// with the fast path on and off: denied is a 403 (401 before signing in) problem, or a problem frame, and changes nothing.
/// </summary>
[Collection(nameof(ProcessWideListeners))]
public sealed class HostAuthorizationTests
{
    private static readonly TimeSpan Bound = WireClient.Bound;

    public enum Caller
    {
        Owner,
        OtherUser,
        Anonymous,
    }

    public static TheoryData<Caller, bool> Callers()
    {
        var data = new TheoryData<Caller, bool>();
        foreach (var caller in Enum.GetValues<Caller>())
        {
            data.Add(caller, true);
            data.Add(caller, false);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Callers))]
    public async Task EveryOperationOnEveryRouteIsTheApplicationsDecision(Caller caller, bool fastPath)
    {
        var logs = new LogRecorder();
        await using var app = await StartAppAsync(fastPath, logs);
        using var requests = new FastPathRequestCounter(app.Services);
        var (ann, _) = await SignedInAsync(app, "ann");
        using var annsClient = ann;
        var topic = await CreateAsync(ann, "ann-orders", HttpStatusCode.Created, presence: true);
        var second = await CreateAsync(ann, "ann-news", HttpStatusCode.Created);
        await PublishAsync(ann, $"/ps/topics/{topic}", HttpStatusCode.Created);
        var (client, jar) = caller switch
        {
            Caller.Owner => await SignedInAsync(app, "ann"),
            Caller.OtherUser => await SignedInAsync(app, "bob"),
            _ => (NewClient(app, new CookieContainer()), new CookieContainer()),
        };
        using var callersClient = client;
        var refused = caller switch { Caller.Owner => (HttpStatusCode?)null, Caller.OtherUser => HttpStatusCode.Forbidden, _ => HttpStatusCode.Unauthorized };
        HttpStatusCode Expect(HttpStatusCode allowed) => refused ?? allowed;
        var store = app.Services.GetRequiredService<ILaharsubStore>();
        var before = (await store.ListTopicsAsync(0, 100).AsTask().WaitAsync(Bound)).Count;

        // Create: a topic labelled with one's own name.
        await CreateAsync(client, "ann-more", Expect(HttpStatusCode.Created));
        // Publish: REST, and to several topics at once.
        await PublishAsync(client, $"/ps/topics/{topic}", Expect(HttpStatusCode.Created));
        await PublishAsync(client, $"/ps/topics/publish?topics={topic},{second}", Expect(HttpStatusCode.Created));
        // Subscribe: both query forms of the poll, an event stream, a WebSocket's handshake; the topic's description.
        await ExpectStatusAsync(client, new HttpRequestMessage(HttpMethod.Get, $"/ps/subscriptions?topics={topic}:1&timeout=0"), Expect(HttpStatusCode.OK));
        await ExpectStatusAsync(client, new HttpRequestMessage(HttpMethod.Get, $"/ps/subscriptions?subs%5B0%5D%5Btopicid%5D={topic}&subs%5B0%5D%5Bfrom%5D=1&timeout=0"), Expect(HttpStatusCode.OK));
        var stream = new HttpRequestMessage(HttpMethod.Get, $"/ps/subscriptions?topics={topic}:1");
        stream.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue("text/event-stream"));
        await ExpectStatusAsync(client, stream, Expect(HttpStatusCode.OK));
        await ExpectStatusAsync(client, new HttpRequestMessage(HttpMethod.Get, $"/ps/topics/{topic}"), Expect(HttpStatusCode.OK));
        Assert.Equal(Expect(HttpStatusCode.SwitchingProtocols), await WebSocketStatusAsync(app, jar, $"/ps/subscriptions?topics={topic}:1"));
        // Presence: the member list of a topic with presence.
        await ExpectStatusAsync(client, new HttpRequestMessage(HttpMethod.Get, $"/ps/topics/{topic}/presence"), Expect(HttpStatusCode.OK));
        // List: the listing shows only what the caller may list.
        using (var listed = await client.GetAsync("/ps/topics").WaitAsync(Bound))
        {
            Assert.Equal(caller == Caller.Anonymous ? HttpStatusCode.Unauthorized : HttpStatusCode.OK, listed.StatusCode);
            if (caller != Caller.Anonymous)
            {
                var labels = JsonDocument.Parse(await listed.Content.ReadAsStringAsync()).RootElement.GetProperty("topics").EnumerateArray()
                    .Select(t => t.GetProperty("label").GetString()).ToArray();
                Assert.Equal(caller == Caller.Owner ? ["ann-orders", "ann-news", "ann-more"] : [], labels);
            }
        }
        // Delete, last.
        await ExpectStatusAsync(client, new HttpRequestMessage(HttpMethod.Delete, $"/ps/topics/{second}"), Expect(HttpStatusCode.NoContent));

        var after = await store.ListTopicsAsync(0, 100).AsTask().WaitAsync(Bound);
        var stored = await store.GetTopicAsync(topic).AsTask().WaitAsync(Bound);
        if (refused is not null)
        {
            // Nothing changed: no topic created or deleted, no message stored.
            Assert.Equal(before, after.Count);
            Assert.Equal(1, stored?.LastMessageId);
        }
        else
        {
            Assert.Equal(before, after.Count);
            Assert.Equal(3, stored?.LastMessageId);
        }
        if (fastPath)
        {
            Assert.Contains(logs.Entries, entry => entry.Message.Contains("Laharsub:Auth:Mode is Host", StringComparison.Ordinal) && entry.Message.Contains("steps aside", StringComparison.Ordinal));
            Assert.Equal(0, requests.Count("poll") + requests.Count("stream") + requests.Count("publish") + requests.Count("websocket"));
            Assert.True(requests.Count("handed_over", "application_authorization") > 0);
        }
    }

    /// <summary>A socket's frames are decided as its handshake was: a subscribe or publish frame naming a topic the caller may not use gets a problem frame, and nothing is stored.</summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task ASocketsFramesAreTheApplicationsDecisionToo(bool fastPath)
    {
        await using var app = await StartAppAsync(fastPath, new LogRecorder());
        var (ann, annsJar) = await SignedInAsync(app, "ann");
        var (bob, _) = await SignedInAsync(app, "bob");
        using var annsClient = ann;
        using var bobsClient = bob;
        var annsTopic = await CreateAsync(ann, "ann-orders", HttpStatusCode.Created);
        var bobsTopic = await CreateAsync(bob, "bob-orders", HttpStatusCode.Created);
        using var timeout = new CancellationTokenSource(Bound);
        using var socket = new ClientWebSocket();
        socket.Options.AddSubProtocol("laharsub.v1");
        socket.Options.Cookies = annsJar;
        await socket.ConnectAsync(new UriBuilder(new Uri(BaseAddress(app), "/ps/subscriptions")) { Scheme = "ws" }.Uri, timeout.Token);
        var frames = new SocketFrames(socket);

        await frames.SendAsync($$"""{"type":"subscribe","id":"s1","topics":"{{bobsTopic}}"}""", timeout.Token);
        var subscribe = await frames.ReadUntilAsync("\"id\":\"s1\"", timeout.Token);
        await frames.SendAsync($$"""{"type":"publish","id":"p1","topicId":{{bobsTopic}},"body":"x"}""", timeout.Token);
        var publish = await frames.ReadUntilAsync("\"id\":\"p1\"", timeout.Token);
        await frames.SendAsync($$"""{"type":"publish","id":"p2","topicId":{{annsTopic}},"body":"mine"}""", timeout.Token);
        var allowed = await frames.ReadUntilAsync("\"id\":\"p2\"", timeout.Token);

        Assert.Contains("\"status\":403", subscribe);
        Assert.Contains("\"operation\":\"subscribe\"", subscribe);
        Assert.Contains("\"status\":403", publish);
        Assert.Contains("\"operation\":\"publish\"", publish);
        Assert.Contains("\"type\":\"published\"", allowed);
        Assert.Equal(0, (await app.Services.GetRequiredService<ILaharsubStore>().GetTopicAsync(bobsTopic).AsTask().WaitAsync(Bound))?.LastMessageId);
    }

    [Fact]
    public async Task HostModeWithoutTheApplicationsAuthorizationDoesNotStart()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        builder.Services.AddLaharsub();
        builder.Services.Configure<LaharsubAuthOptions>(options => options.Mode = LaharsubAuthMode.Host);
        await using var app = builder.Build();

        var failure = Assert.Throws<InvalidOperationException>(() => app.MapLaharsub("/ps"));
        Assert.Contains("AddAuthorization()", failure.Message, StringComparison.Ordinal);
        Assert.Contains("AuthorizationHandler<LaharsubRequirement, LaharsubTopic>", failure.Message, StringComparison.Ordinal);
    }

    /// <summary>
    /// A stream runs on its opening decision for Laharsub:Auth:StreamDecisionLifetime at most: then it ends telling its
    /// client (SSE <c>reconnect</c> with <c>redecide</c>, a socket's close 4002), and the reconnect is decided again, so
    /// a permission the application revoked meanwhile is refused.
    /// </summary>
    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task AStreamIsDecidedAgainAfterItsLifetimeSoARevokedPermissionEndsIt(bool fastPath)
    {
        var clock = new Microsoft.Extensions.Time.Testing.FakeTimeProvider(DateTimeOffset.UtcNow);
        var revoked = new Revocations();
        await using var app = await StartAppAsync(fastPath, new LogRecorder(), clock, revoked);
        var (ann, annsJar) = await SignedInAsync(app, "ann");
        using var annsClient = ann;
        var topic = await CreateAsync(ann, "ann-orders", HttpStatusCode.Created);
        using var timeout = new CancellationTokenSource(Bound);
        using var request = new HttpRequestMessage(HttpMethod.Get, $"/ps/subscriptions?topics={topic}");
        request.Headers.Accept.Add(new MediaTypeWithQualityHeaderValue("text/event-stream"));
        using var stream = await ann.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, timeout.Token);
        Assert.Equal(HttpStatusCode.OK, stream.StatusCode);
        using var events = new StreamReader(await stream.Content.ReadAsStreamAsync(timeout.Token));
        using var socket = new ClientWebSocket();
        socket.Options.AddSubProtocol("laharsub.v1");
        socket.Options.Cookies = annsJar;
        await socket.ConnectAsync(new UriBuilder(new Uri(BaseAddress(app), $"/ps/subscriptions?topics={topic}")) { Scheme = "ws" }.Uri, timeout.Token);
        var frames = new SocketFrames(socket);
        await ReadLineAsync(events, "event: subscribed", timeout.Token);
        await frames.ReadUntilAsync("\"type\":\"subscribed\"", timeout.Token);

        revoked.Users.Add("ann");
        clock.Advance(TimeSpan.FromMinutes(5) + TimeSpan.FromSeconds(1));

        await ReadLineAsync(events, "event: reconnect", timeout.Token);
        Assert.Contains("\"reason\":\"redecide\"", await events.ReadLineAsync(timeout.Token));
        var buffer = new byte[4096];
        while ((await socket.ReceiveAsync(buffer, timeout.Token)).MessageType != WebSocketMessageType.Close)
        {
        }
        Assert.Equal(4002, (int?)socket.CloseStatus);
        await ExpectStatusAsync(ann, new HttpRequestMessage(HttpMethod.Get, $"/ps/subscriptions?topics={topic}&timeout=0"), HttpStatusCode.Forbidden);
    }

    private static async Task ReadLineAsync(StreamReader reader, string expected, CancellationToken cancellationToken)
    {
        while (await reader.ReadLineAsync(cancellationToken) is { } line)
        {
            if (line == expected)
            {
                return;
            }
        }
        Assert.Fail($"the stream ended before '{expected}'");
    }

    /// <summary>Users whose permissions the application took back.</summary>
    private sealed class Revocations
    {
        public System.Collections.Concurrent.ConcurrentBag<string> Users { get; } = [];
    }

    /// <summary>The application's rule: a signed-in user may do anything on the topics labelled with their name, and list.</summary>
    private sealed class OwnTopics(Revocations revoked) : AuthorizationHandler<LaharsubRequirement, LaharsubTopic>
    {
        protected override Task HandleRequirementAsync(AuthorizationHandlerContext context, LaharsubRequirement requirement, LaharsubTopic topic)
        {
            var name = context.User.Identity?.IsAuthenticated == true && !revoked.Users.Contains(context.User.Identity.Name!) ? context.User.Identity.Name : null;
            var owned = name is not null && topic.Label is { } label && label.StartsWith(name + "-", StringComparison.Ordinal);
            var listing = name is not null && requirement.Operation == LaharsubOperation.List && topic.TopicId is null;
            if (owned || listing)
            {
                context.Succeed(requirement);
            }
            return Task.CompletedTask;
        }
    }

    private static Task<WebApplication> StartAppAsync(bool fastPath, LogRecorder logs, TimeProvider? clock = null, Revocations? revoked = null) =>
        CookieApp.StartAsync(fastPath, logs, services =>
        {
            if (clock is not null)
            {
                services.AddSingleton(clock);
            }
            services.AddSingleton(revoked ?? new Revocations());
            services.Configure<LaharsubAuthOptions>(options => options.Mode = LaharsubAuthMode.Host);
            services.AddSingleton<IAuthorizationHandler, OwnTopics>();
        });

    private static Uri BaseAddress(WebApplication app) => CookieApp.BaseAddress(app);

    private static HttpClient NewClient(WebApplication app, CookieContainer jar) => CookieApp.NewClient(app, jar);

    private static async Task<(HttpClient Client, CookieContainer Jar)> SignedInAsync(WebApplication app, string user)
    {
        var jar = new CookieContainer();
        var client = NewClient(app, jar);
        using var login = await client.PostAsync($"/login/{user}", null).WaitAsync(Bound);
        Assert.Equal(HttpStatusCode.NoContent, login.StatusCode);
        return (client, jar);
    }

    private static async Task<long> CreateAsync(HttpClient client, string label, HttpStatusCode expected, bool presence = false)
    {
        var json = presence ? $$"""{"label":"{{label}}","presence":true}""" : $$"""{"label":"{{label}}"}""";
        using var created = await client.PostAsync("/ps/topics", new StringContent(json, Encoding.UTF8, "application/json")).WaitAsync(Bound);
        var body = await created.Content.ReadAsStringAsync();
        Assert.True(created.StatusCode == expected, $"creating {label}: {(int)created.StatusCode} {body}");
        if (expected != HttpStatusCode.Created)
        {
            AssertProblem(body, expected);
            return 0;
        }
        return JsonDocument.Parse(body).RootElement.GetProperty("topicId").GetInt64();
    }

    private static async Task PublishAsync(HttpClient client, string path, HttpStatusCode expected) =>
        await ExpectStatusAsync(client, new HttpRequestMessage(HttpMethod.Post, path) { Content = new StringContent("hello") }, expected);

    private static async Task ExpectStatusAsync(HttpClient client, HttpRequestMessage request, HttpStatusCode expected)
    {
        using (request)
        {
            using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).WaitAsync(Bound);
            Assert.True(response.StatusCode == expected, $"{request.Method} {request.RequestUri}: {(int)response.StatusCode}, expected {(int)expected}");
            if ((int)expected is 401 or 403)
            {
                AssertProblem(await response.Content.ReadAsStringAsync().WaitAsync(Bound), expected);
            }
        }
    }

    /// <summary>A refusal is a problem naming the operation, saying nothing was changed.</summary>
    private static void AssertProblem(string body, HttpStatusCode status)
    {
        var problem = JsonDocument.Parse(body).RootElement;
        Assert.Equal((int)status, problem.GetProperty("status").GetInt32());
        Assert.True(problem.TryGetProperty("operation", out _), body);
        Assert.Contains("Nothing was changed", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
    }

    private static async Task<HttpStatusCode> WebSocketStatusAsync(WebApplication app, CookieContainer jar, string path)
    {
        using var socket = new ClientWebSocket();
        socket.Options.AddSubProtocol("laharsub.v1");
        socket.Options.CollectHttpResponseDetails = true;
        socket.Options.Cookies = jar;
        try
        {
            await socket.ConnectAsync(new UriBuilder(new Uri(BaseAddress(app), path)) { Scheme = "ws" }.Uri, CancellationToken.None).WaitAsync(Bound);
            await socket.CloseOutputAsync(WebSocketCloseStatus.NormalClosure, null, CancellationToken.None).WaitAsync(Bound);
        }
        catch (WebSocketException)
        {
        }
        return socket.HttpStatusCode;
    }

    /// <summary>Text frames of a socket, read until one contains what a test waits for.</summary>
    private sealed class SocketFrames(ClientWebSocket socket)
    {
        public Task SendAsync(string text, CancellationToken cancellationToken) =>
            socket.SendAsync(Encoding.UTF8.GetBytes(text), WebSocketMessageType.Text, endOfMessage: true, cancellationToken);

        public async Task<string> ReadUntilAsync(string marker, CancellationToken cancellationToken)
        {
            var buffer = new byte[64 * 1024];
            while (true)
            {
                var text = new StringBuilder();
                WebSocketReceiveResult received;
                do
                {
                    received = await socket.ReceiveAsync(buffer, cancellationToken);
                    Assert.NotEqual(WebSocketMessageType.Close, received.MessageType);
                    text.Append(Encoding.UTF8.GetString(buffer, 0, received.Count));
                }
                while (!received.EndOfMessage);
                if (text.ToString().Contains(marker, StringComparison.Ordinal))
                {
                    return text.ToString();
                }
            }
        }
    }
}
