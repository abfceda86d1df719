using System.Net;
using System.Text.Json;
using Laharsub.Server.Tests.Access;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// Streams in Jwt mode (docs/protocol.md, "Tokens on streams"): the token travels in the query as
/// <c>access_token</c>, as a browser's EventSource and WebSocket can only send it, and every topic a stream
/// follows or a socket publishes to is checked against it.
/// </summary>
public sealed class StreamAccessTests(JwtServerFixture fixture) : IClassFixture<JwtServerFixture>
{
    /// <summary>
    /// A browser's EventSource sends <c>Accept: text/event-stream</c> alone; the refusals written through
    /// ASP.NET Core's IProblemDetailsService (401 here, 429 in <see cref="StreamLimitTests"/>) then find no
    /// writer and answer 500 (<see cref="ABrowsersEventSourceWithABadTokenIsRefused401NotA500"/>). The tests
    /// of what a refusal says also accept problem details, as a client that can set Accept would.
    /// </summary>
    internal const string EventStreamOrProblem = "text/event-stream, application/problem+json";

    private LaharsubTestServer Server => fixture.Server;

    [Fact]
    public async Task AnAccessTokenInTheQueryAuthorizesAnEventStream()
    {
        var topic = await fixture.Admin.CreateTopicAsync();
        var token = TestTokens.Grant($$"""{"subscribe":["{{topic}}"]}""");

        using (var anonymous = await EventStreamReader.RequestAsync(fixture.Anonymous, $"topics={topic}", accept: EventStreamOrProblem))
        {
            Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);
        }
        await using var stream = await EventStreamReader.OpenAsync(fixture.Anonymous, $"topics={topic}&access_token={token}");
        await stream.ReadEventAsync("subscribed");
        await fixture.Admin.PublishTextAsync(topic, "for the token's holder");
        var message = await stream.ReadEventAsync();

        Assert.Equal(("message", "for the token's holder"), (message.Type, message.Json.Text()));
    }

    [Fact]
    public async Task AnAccessTokenInTheQueryAuthorizesASocketWhoseSubscribeAndPublishFramesAreCheckedAgainstIt()
    {
        var allowed = await fixture.Admin.CreateTopicAsync();
        var other = await fixture.Admin.CreateTopicAsync();
        var token = TestTokens.Grant($$"""{"subscribe":["{{allowed}}"]}""");

        await using var socket = await LaharsubSocket.ConnectAsync(Server.ApiAddress, $"topics={allowed}&access_token={token}");
        var subscribed = await socket.ReceiveAsync("subscribed");
        await socket.SendAsync($$"""{"type":"subscribe","id":"s1","topics":"{{other}}"}""");
        var forbiddenTopic = await socket.ReceiveAsync("problem");
        await socket.SendAsync($$"""{"type":"publish","id":"p1","topicId":{{allowed}},"body":"not mine to publish"}""");
        var forbiddenPublish = await socket.ReceiveAsync("problem");
        var stored = (await fixture.Admin.GetTopicAsync(allowed)).GetProperty("lastMessageId").GetInt64();
        await fixture.Admin.PublishTextAsync(other, "on the forbidden topic");
        await fixture.Admin.PublishTextAsync(allowed, "on the allowed topic");
        var message = await socket.ReceiveAsync();

        Assert.Equal([allowed], subscribed.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()));
        AssertForbidden(forbiddenTopic, "s1", other);
        AssertForbidden(forbiddenPublish, "p1", allowed);
        Assert.Equal(0, stored);
        // The refused subscribe changed nothing: the socket still follows only its allowed topic.
        Assert.Equal(("message", "on the allowed topic"), (message.GetProperty("type").GetString(), message.GetProperty("message").Text()));
    }

    /// <summary>A publish frame to several topics is checked on every topic before the store is asked: the first forbidden one is named, and nothing is published.</summary>
    [Fact]
    public async Task APublishFrameToSeveralTopicsNeedsPublishOnEveryTopic()
    {
        var allowed = await fixture.Admin.CreateTopicAsync();
        var alsoAllowed = await fixture.Admin.CreateTopicAsync();
        var forbidden = await fixture.Admin.CreateTopicAsync();
        var token = TestTokens.Grant($$"""{"publish":["{{allowed}}","{{alsoAllowed}}"]}""");

        await using var socket = await LaharsubSocket.ConnectAsync(Server.ApiAddress, $"access_token={token}");
        await socket.ReceiveAsync("subscribed");
        await socket.SendAsync($$"""{"type":"publish","id":"p1","topics":"{{allowed}},{{forbidden}},{{alsoAllowed}}","body":"all or none","idempotencyKey":"k"}""");
        var refused = await socket.ReceiveAsync("problem");
        await socket.SendAsync($$"""{"type":"publish","id":"p2","topics":"{{allowed}},{{alsoAllowed}}","body":"allowed"}""");
        var published = await socket.ReceiveAsync("published");

        AssertForbidden(refused, "p1", forbidden);
        Assert.Equal([1L, 1L], published.GetProperty("messages").EnumerateArray().Select(m => m.GetProperty("messageId").GetInt64()));
        Assert.Equal(0, (await fixture.Admin.GetTopicAsync(forbidden)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task ABadTokenInTheQueryIsRefused401BeforeTheStreamStarts()
    {
        var topic = await fixture.Admin.CreateTopicAsync();
        var tampered = TestTokens.Tampered($$"""{"subscribe":["{{topic + 1000}}"]}""", """{"subscribe":true}""");

        var socketStatus = await LaharsubSocket.RefusedAsync(Server.ApiAddress, $"topics={topic}&access_token={tampered}");
        using var stream = await EventStreamReader.RequestAsync(fixture.Anonymous, $"topics={topic}&access_token={tampered}", accept: EventStreamOrProblem);

        Assert.Equal(HttpStatusCode.Unauthorized, socketStatus);
        Assert.Equal(HttpStatusCode.Unauthorized, stream.StatusCode);
        Assert.Equal("application/problem+json", stream.Content.Headers.ContentType?.MediaType);
        Assert.Contains("Bearer", stream.Headers.WwwAuthenticate.ToString());
    }

    [Fact]
    public async Task ABrowsersEventSourceWithABadTokenIsRefused401NotA500()
    {
        var topic = await fixture.Admin.CreateTopicAsync();

        using var stream = await EventStreamReader.RequestAsync(fixture.Anonymous, $"topics={topic}&access_token=not-a-token");

        Assert.Equal(HttpStatusCode.Unauthorized, stream.StatusCode);
        Assert.Contains("Bearer", stream.Headers.WwwAuthenticate.ToString());
    }

    [Fact]
    public async Task ATokenThatDoesNotAllowATopicOfTheQueryIsRefused403BeforeTheStreamStarts()
    {
        var allowed = await fixture.Admin.CreateTopicAsync();
        var other = await fixture.Admin.CreateTopicAsync();
        var token = TestTokens.Grant($$"""{"subscribe":["{{allowed}}"]}""");

        var socketStatus = await LaharsubSocket.RefusedAsync(Server.ApiAddress, $"topics={allowed},{other}&access_token={token}");
        using var stream = await EventStreamReader.RequestAsync(fixture.Anonymous, $"topics={allowed},{other}&access_token={token}");
        var problem = JsonDocument.Parse(await stream.Content.ReadAsStringAsync()).RootElement;

        Assert.Equal(HttpStatusCode.Forbidden, socketStatus);
        Assert.Equal(HttpStatusCode.Forbidden, stream.StatusCode);
        Assert.Equal(other, problem.GetProperty("topicId").GetInt64());
    }

    private static void AssertForbidden(JsonElement frame, string id, long topicId)
    {
        Assert.Equal(id, frame.GetProperty("id").GetString());
        var problem = frame.GetProperty("problem");
        Assert.Equal((403, topicId), (problem.GetProperty("status").GetInt32(), problem.GetProperty("topicId").GetInt64()));
    }
}
