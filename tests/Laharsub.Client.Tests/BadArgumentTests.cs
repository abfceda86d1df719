using System.Text.Json.Serialization.Metadata;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

public sealed class BadArgumentTests
{
    private static readonly Order AnOrder = new("tea", 1);

    public static TheoryData<string, Func<LaharsubClient, Task>> ClientCalls => new()
    {
        { "GetTopicAsync(0)", c => c.GetTopicAsync(0) },
        { "GetTopicAsync(-1)", c => c.GetTopicAsync(-1) },
        { "DeleteTopicAsync(0)", c => c.DeleteTopicAsync(0) },
        { "ListTopicsAsync(after: -1)", c => c.ListTopicsAsync(-1) },
        { "ListTopicsAsync(limit: 0)", c => c.ListTopicsAsync(0, 0) },
        { "ListTopicsAsync(limit: 1001)", c => c.ListTopicsAsync(0, 1001) },
        { "ListAllTopicsAsync(pageSize: 0)", c => c.ListAllTopicsAsync(0).ToListAsync().AsTask() },
        { "PublishAsync(topic 0)", c => c.PublishAsync(0, new byte[] { 1 }, "text/plain") },
        { "PublishAsync(empty body)", c => c.PublishAsync(1, ReadOnlyMemory<byte>.Empty, "text/plain") },
        { "PublishAsync(null content type)", c => c.PublishAsync(1, new byte[] { 1 }, null!) },
        { "PublishAsync(empty content type)", c => c.PublishAsync(1, new byte[] { 1 }, "") },
        { "PublishAsync(blank content type)", c => c.PublishAsync(1, new byte[] { 1 }, "  ") },
        { "PublishAsync(unparseable content type)", c => c.PublishAsync(1, new byte[] { 1 }, "not a media type") },
        { "PublishAsync(null text)", c => c.PublishAsync(1, (string)null!) },
        { "PublishAsync(empty text)", c => c.PublishAsync(1, "") },
        { "PublishAsync(text, empty content type)", c => c.PublishAsync(1, "x", "") },
        { "PublishAsync(text, topic -3)", c => c.PublishAsync(-3, "x") },
        { "PublishJsonAsync(null value)", c => c.PublishJsonAsync<Order>(1, null!) },
        { "PublishJsonAsync(topic 0)", c => c.PublishJsonAsync(0, AnOrder) },
        { "PublishJsonAsync(null type info)", c => c.PublishJsonAsync(1, AnOrder, (JsonTypeInfo<Order>)null!) },
        { "PublishJsonAsync(type info, null value)", c => c.PublishJsonAsync(1, null!, TestJsonContext.Default.Order) },
        { "Subscribe(null)", c => Task.FromResult(c.Subscribe((IEnumerable<KeyValuePair<long, long>>)null!)) },
        { "Subscribe(null cursors with epochs)", c => Task.FromResult(c.Subscribe((IReadOnlyDictionary<long, TopicCursor>)null!)) },
        { "Subscribe(cursor with a bad epoch)", c => Task.FromResult(c.Subscribe(new Dictionary<long, TopicCursor> { [1] = new(1, "not/an epoch") })) },
        { "Subscribe(cursor with an empty epoch)", c => Task.FromResult(c.Subscribe(new Dictionary<long, TopicCursor> { [1] = new(1, "") })) },
        { "Subscribe(cursor with a 33-character epoch)", c => Task.FromResult(c.Subscribe(new Dictionary<long, TopicCursor> { [1] = new(1, new string('a', 33)) })) },
        { "Subscribe(cursor 0 with an epoch)", c => Task.FromResult(c.Subscribe(new Dictionary<long, TopicCursor> { [1] = new(0, "abc") })) },
        { "Subscribe(cursor -1)", c => Task.FromResult(c.Subscribe(new Dictionary<long, TopicCursor> { [1] = new(-1) })) },
        { "AddState(topic 0)", c => Do(() => c.Subscribe().AddState(0)) },
        { "AddState<T>(topic 0)", c => Do(() => c.Subscribe().AddState<Order>(0, TestJsonContext.Default.Order)) },
        { "AddState<T>(null type info)", c => Do(() => c.Subscribe().AddState<Order>(1, (JsonTypeInfo<Order>)null!)) },
        { "SubscribeState(topic 0)", c => Do(() => c.SubscribeState<Order>(0, TestJsonContext.Default.Order)) },
        { "CreateStateTopicAsync(empty label)", c => c.CreateStateTopicAsync("") },
        { "GetStateAsync(topic 0)", c => c.GetStateAsync(0) },
        { "PatchStateAsync(topic 0)", c => c.PatchStateAsync(0, new System.Text.Json.Nodes.JsonObject { ["a"] = 1 }) },
        { "PatchStateAsync(null patch)", c => c.PatchStateAsync(1, (System.Text.Json.Nodes.JsonObject)null!) },
        { "PatchStateAsync(version without epoch)", c => c.PatchStateAsync(1, new System.Text.Json.Nodes.JsonObject(), new PublishOptions { ExpectedVersion = 3 }) },
        { "ReplaceStateAsync(negative version)", c => c.ReplaceStateAsync(1, AnOrder, TestJsonContext.Default.Order, new PublishOptions { ExpectedEpoch = "e", ExpectedVersion = -1 }) },
        { "Add(epoch with a tilde)", c => Do(() => c.Subscribe().Add(1, 1, "a~b")) },
        { "PublishAsync(expected epoch with a quote)", c => c.PublishAsync(1, new byte[] { 1 }, "text/plain", new PublishOptions { ExpectedEpoch = "a\"b" }) },
        { "PublishAsync(text, empty expected epoch)", c => c.PublishAsync(1, "x", "text/plain", new PublishOptions { ExpectedEpoch = "" }) },
        { "Subscribe(topic 0)", c => Task.FromResult(c.Subscribe([new(0, 1)])) },
        { "Subscribe(cursor 0)", c => Task.FromResult(c.Subscribe([new(1, 0)])) },
        { "Add(topic 0)", c => Do(() => c.Subscribe().Add(0, 1)) },
        { "Add(cursor 0)", c => Do(() => c.Subscribe().Add(1, 0)) },
        { "Add(cursor -5)", c => Do(() => c.Subscribe().Add(1, -5)) },
        { "AddAsync(topic 0)", c => c.Subscribe().AddAsync(0) },
        { "CreateTopicWithPresenceAsync(empty label)", c => c.CreateTopicWithPresenceAsync("") },
        { "GetPresenceAsync(topic 0)", c => c.GetPresenceAsync(0) },
        { "GetPresenceAsync(empty after)", c => c.GetPresenceAsync(1, "") },
        { "GetPresenceAsync(limit 0)", c => c.GetPresenceAsync(1, limit: 0) },
        { "GetPresenceAsync(limit 1001)", c => c.GetPresenceAsync(1, limit: 1001) },
        { "ListAllPresenceAsync(topic 0)", c => c.ListAllPresenceAsync(0).ToListAsync().AsTask() },
        { "ListAllPresenceAsync(pageSize 0)", c => c.ListAllPresenceAsync(1, 0).ToListAsync().AsTask() },
        { "ClientId empty", c => Do(() => c.Subscribe().ClientId = "") },
        { "ClientId with a space", c => Do(() => c.Subscribe().ClientId = "a b") },
        { "ClientId of 65 characters", c => Do(() => c.Subscribe().ClientId = new string('a', 65)) },
        { "MemberData not JSON", c => Do(() => c.Subscribe().MemberData = "name=Alice") },
        { "MemberData a JSON array", c => Do(() => c.Subscribe().MemberData = "[1]") },
        { "MemberData a JSON string", c => Do(() => c.Subscribe().MemberData = "\"Alice\"") },
        { "MemberData above 4096 bytes", c => Do(() => c.Subscribe().MemberData = $"{{\"n\":\"{new string('a', 4100)}\"}}") },
    };

    public static TheoryData<string, Action<Uri>> Constructions => new()
    {
        { "null address", api => _ = new LaharsubClient((Uri)null!) },
        { "relative address", api => _ = new LaharsubClient(new Uri("/ps/", UriKind.Relative)) },
        { "ftp address", api => _ = new LaharsubClient(new Uri("ftp://127.0.0.1/ps/")) },
        { "address with a query", api => _ = new LaharsubClient(new Uri(api, "?x=1")) },
        { "null HttpClient", api => _ = new LaharsubClient((HttpClient)null!) },
        { "HttpClient without BaseAddress", api => _ = new LaharsubClient(new HttpClient()) },
        { "HttpClient with a 5 s timeout", api => _ = new LaharsubClient(new HttpClient { BaseAddress = api, Timeout = TimeSpan.FromSeconds(5) }) },
        { "null address list", api => _ = new LaharsubClient((IEnumerable<Uri>)null!) },
        { "empty address list", api => _ = new LaharsubClient(Array.Empty<Uri>()) },
        { "address list with a null", api => _ = new LaharsubClient([api, null!]) },
        { "address list with a relative address", api => _ = new LaharsubClient([api, new Uri("/ps/", UriKind.Relative)]) },
        { "address list naming one address twice", api => _ = new LaharsubClient([api, new Uri(api.AbsoluteUri.TrimEnd('/'))]) },
        { "HttpClient with an empty address list", api => _ = new LaharsubClient(new HttpClient(), Array.Empty<Uri>()) },
        { "PollTimeout 0", api => _ = new LaharsubClient(api, new LaharsubClientOptions { PollTimeout = TimeSpan.Zero }) },
        { "PollTimeout 1.5 s", api => _ = new LaharsubClient(api, new LaharsubClientOptions { PollTimeout = TimeSpan.FromSeconds(1.5) }) },
        { "PollTimeout 2 h", api => _ = new LaharsubClient(api, new LaharsubClientOptions { PollTimeout = TimeSpan.FromHours(2) }) },
        { "unknown PollFormat", api => _ = new LaharsubClient(api, new LaharsubClientOptions { PollFormat = (PollFormat)7 }) },
        { "unknown Transport", api => _ = new LaharsubClient(api, new LaharsubClientOptions { Transport = (LaharsubTransport)7 }) },
        { "RequestTimeout 0", api => _ = new LaharsubClient(api, new LaharsubClientOptions { RequestTimeout = TimeSpan.Zero }) },
        { "RetryDelay 0", api => _ = new LaharsubClient(api, new LaharsubClientOptions { RetryDelay = TimeSpan.Zero }) },
        { "MaxRetryDelay below RetryDelay", api => _ = new LaharsubClient(api, new LaharsubClientOptions { RetryDelay = TimeSpan.FromSeconds(2), MaxRetryDelay = TimeSpan.FromSeconds(1) }) },
        { "MaxRequestAttempts 0", api => _ = new LaharsubClient(api, new LaharsubClientOptions { MaxRequestAttempts = 0 }) },
        { "MaxRetryAfter negative", api => _ = new LaharsubClient(api, new LaharsubClientOptions { MaxRetryAfter = TimeSpan.FromSeconds(-1) }) },
        { "TimeProvider null", api => _ = new LaharsubClient(api, new LaharsubClientOptions { TimeProvider = null! }) },
    };

    [Theory]
    [MemberData(nameof(ClientCalls))]
    public async Task EachBadArgumentThrowsArgumentExceptionBeforeAnyRequest(string call, Func<LaharsubClient, Task> act)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options());

        var error = await Assert.ThrowsAnyAsync<ArgumentException>(() => act(client).WaitAsync(TestSupport.Timeout));

        Assert.False(string.IsNullOrWhiteSpace(error.ParamName), $"{call}: the exception names no parameter.");
        Assert.Equal(0, handler.Requests);
        Assert.Empty((await server.Store.ListTopicsAsync(0, 10)));
    }

    [Theory]
    [MemberData(nameof(Constructions))]
    public void EachBadConstructionThrowsArgumentException(string construction, Action<Uri> construct)
    {
        var error = Assert.ThrowsAny<ArgumentException>(() => construct(new Uri("http://127.0.0.1:1/ps/")));

        Assert.False(string.IsNullOrWhiteSpace(error.Message), $"{construction}: the exception says nothing.");
    }

    [Fact]
    public async Task AnAddressWithoutATrailingSlashStillReachesTheApi()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = new LaharsubClient(new Uri(server.ApiAddress.AbsoluteUri.TrimEnd('/')), TestSupport.Options());

        Assert.Equal(1, await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout));
        Assert.Equal(server.ApiAddress, client.ApiAddress);
    }

    private static Task Do(Action action)
    {
        action();
        return Task.CompletedTask;
    }
}
