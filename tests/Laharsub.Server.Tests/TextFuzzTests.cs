using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests;

/// <summary>
/// Text that is not Unicode, wherever the server reads text: raw bytes that are not UTF-8, and JSON escapes
/// of lone surrogates (high, low, a reversed pair, two highs, a high before a non-surrogate) at the start,
/// middle and end of a value. In JSON bodies, query strings, headers and WebSocket frames. Enumerated rather
/// than random, so that a failure names its case. Every case must get the documented answer (a 400 problem, or
/// a <c>problem</c> frame, naming the field), never a 5xx, a socket dropped without a close frame or an error in
/// the log; and nothing is stored.
/// </summary>
public sealed class TextFuzzTests : IAsyncLifetime
{
    private readonly LogRecorder _logs = new();
    private LaharsubTestServer _server = null!;
    private HttpClient _client = null!;
    private long _topic, _other, _room, _companion;

    public async Task InitializeAsync()
    {
        _server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<ILoggerProvider>(_logs));
        _client = _server.CreateClient();
        _topic = await _client.CreateTopicAsync();
        _other = await _client.CreateTopicAsync();
        await _client.PublishTextAsync(_topic, "kept");
        (_room, _companion) = await Presence.PresenceClient.CreatePresenceTopicAsync(_client);
    }

    public async Task DisposeAsync()
    {
        _client.Dispose();
        await _server.DisposeAsync();
        _logs.Dispose();
    }

    /// <summary>A piece of text that is not Unicode, as the bytes that stand for it inside a JSON string.</summary>
    public sealed record BadText(string Name, byte[] Json)
    {
        public override string ToString() => Name;

        /// <summary>Every byte percent-encoded, as a query value.</summary>
        public static string Escaped(byte[] bytes) => string.Concat(bytes.Select(b => $"%{b:X2}"));

        /// <summary>The bytes where the unescaped value goes: the escapes as written, raw bytes as themselves.</summary>
        public byte[] In(string template) => Splice(Encoding.UTF8.GetBytes(template));

        private byte[] Splice(byte[] template)
        {
            var at = template.AsSpan().IndexOf("<?>"u8);
            return [.. template.AsSpan(0, at), .. Json, .. template.AsSpan(at + 3)];
        }
    }

    /// <summary>JSON escapes of surrogates out of pairs: each parses as JSON and cannot be read as a string.</summary>
    private static readonly string[] SurrogateEscapes =
        [@"\ud800", @"\udbff", @"\udc00", @"\udfff", @"\udc00\ud800", @"\ud800\ud800", @"\ud800\u0041", @"\uD83D"];

    /// <summary>Bytes that are not UTF-8: stray, overlong, cut short, an encoded surrogate, beyond U+10FFFF, and 0xFF.</summary>
    private static readonly byte[][] NotUtf8 =
        [[0xff], [0xfe, 0xff], [0x80], [0xc0, 0xaf], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf0, 0x9f, 0x98]];

    /// <summary>Each bad piece at the start, in the middle and at the end of a value.</summary>
    public static IEnumerable<BadText> BadTexts()
    {
        var pieces = SurrogateEscapes.Select(e => (Name: e, Bytes: Encoding.ASCII.GetBytes(e)))
            .Concat(NotUtf8.Select(b => (Name: "0x" + Convert.ToHexString(b), Bytes: b)));
        foreach (var (name, bytes) in pieces)
        {
            yield return new BadText(name + " at the start", [.. bytes, .. "ab"u8]);
            yield return new BadText(name + " in the middle", [.. "a"u8, .. bytes, .. "b"u8]);
            yield return new BadText(name + " at the end", [.. "ab"u8, .. bytes]);
        }
    }

    [Fact]
    public async Task ATopicsDescriptionWithInvalidTextIs400NamingTheFieldAndCreatesNothing()
    {
        var failures = new List<string>();
        foreach (var text in BadTexts())
        {
            foreach (var (template, field) in new[]
            {
                ("""{"label":"<?>"}""", "label"),
                ("""{"presence":true,"label":"<?>"}""", "label"),
                ("""{"<?>":1}""", "body"),
                ("""{"label":"orders","<?>":"x"}""", "body"),
            })
            {
                var body = text.In(template);
                await ExpectProblemAsync(failures, $"{template} with {text}", Request("POST", "/ps/topics", body, "application/json"), field);
            }
        }
        Assert.True(failures.Count == 0, string.Join("\n", failures.Take(30)));
        await AssertNothingChangedAsync();
    }

    [Fact]
    public async Task PresenceDataAndQueryValuesWithInvalidTextAre400NamingTheParameterOnEveryQueryForm()
    {
        var failures = new List<string>();
        foreach (var text in BadTexts())
        {
            var memberValue = BadText.Escaped(text.In("""{"name":"<?>"}"""));
            var memberName = BadText.Escaped(text.In("""{"<?>":1}"""));
            var nested = BadText.Escaped(text.In("""{"tags":["a",{"deep":"<?>"}]}"""));
            var value = BadText.Escaped(text.Json);
            foreach (var (query, parameter) in new[]
            {
                ($"topics={_room}&timeout=0&client=ann&member={memberValue}", "member"),
                ($"subs[0][topicid]={_room}&timeout=0&client=ann&member={memberName}", "member"),
                ($"topics={_room}&timeout=0&client=ann&member={nested}", "member"),
                ($"topics={_room}&timeout=0&client={value}", "client"),
                ($"topics={value}&timeout=0", "topics"),
                ($"topics={_topic}:{value}&timeout=0", "topics"),
                ($"topics={_topic}:1~{value}&timeout=0", "topics"),
                ($"subs[0][topicid]={value}&timeout=0", "subs[0][topicid]"),
                ($"subs[0][topicid]={_topic}&subs[0][epoch]={value}&timeout=0", "subs[0][epoch]"),
                ($"topics={_topic}&timeout={value}", "timeout"),
            })
            {
                // The long poll, its JSON and multipart answers, and an event stream: one query parser, refused before any of them starts.
                foreach (var accept in new[] { "application/json", "multipart/mixed", "text/event-stream" })
                {
                    await ExpectProblemAsync(failures, $"GET ?{query} ({accept}) with {text}",
                        Request("GET", "/ps/subscriptions?" + query, accept: accept), parameter);
                }
            }
            await ExpectProblemAsync(failures, $"GET topics?label= with {text}", Request("GET", "/ps/topics?label=" + value), "label");
            await ExpectProblemAsync(failures, $"POST publish?topics= with {text}",
                Request("POST", "/ps/topics/publish?topics=" + value, "x"u8.ToArray(), "text/plain"), "topics");
            // Any text is a place in the member list: after= is compared, never shown.
            await ExpectStatusAsync(failures, $"GET presence?after= with {text}", Request("GET", $"/ps/topics/{_room}/presence?after={value}"), 200);
        }
        Assert.True(failures.Count == 0, string.Join("\n", failures.Take(30)));
        await AssertNothingChangedAsync();
    }

    [Fact]
    public async Task AWebSocketUrlWithInvalidPresenceDataIsRefusedBeforeTheUpgrade()
    {
        var failures = new List<string>();
        foreach (var text in BadTexts())
        {
            var status = await LaharsubSocket.RefusedAsync(_server.ApiAddress, $"topics={_room}&client=ann&member={BadText.Escaped(text.In("""{"name":"<?>"}"""))}");
            if ((int)status != 400)
            {
                failures.Add($"{text}: {(int)status}");
            }
        }
        Assert.True(failures.Count == 0, string.Join("\n", failures));
        await AssertNothingChangedAsync();
    }

    [Fact]
    public async Task RequestLinesAndHeadersWithBytesThatAreNotUtf8Are400()
    {
        // Kestrel refuses a request line that is not UTF-8, and a header value that is not ASCII, before the
        // application sees them (docs/protocol.md, "Answers without a body"): a 400, and no such text reaches the server's parsers.
        var failures = new List<string>();
        foreach (var bytes in NotUtf8)
        {
            var value = Encoding.Latin1.GetString(bytes);
            foreach (var (name, request) in new[]
            {
                ("member", Request("GET", $"/ps/subscriptions?topics={_room}&timeout=0&client=ann&member={{\"n\":\"{value}\"}}")),
                ("client", Request("GET", $"/ps/subscriptions?topics={_room}&timeout=0&client=a{value}")),
                ("label", Request("GET", $"/ps/topics?label=a{value}")),
                ("topics", Request("POST", $"/ps/topics/publish?topics={_topic}{value}", "x"u8.ToArray(), "text/plain")),
                ("Last-Event-ID", Request("GET", $"/ps/subscriptions?topics={_topic}", accept: "text/event-stream", headers: $"Last-Event-ID: {_topic}:1{value}\r\n")),
                ("Idempotency-Key", Request("POST", $"/ps/topics/{_topic}", "x"u8.ToArray(), "text/plain", headers: $"Idempotency-Key: k{value}\r\n")),
                ("Content-Type", Request("POST", $"/ps/topics/{_topic}", "x"u8.ToArray(), $"text/plain; charset={value}")),
                ("Content-Type", Request("POST", "/ps/topics", """{"label":"a"}"""u8.ToArray(), $"application/json; x={value}")),
            })
            {
                await ExpectStatusAsync(failures, $"{name} with 0x{Convert.ToHexString(bytes)}", request, 400);
            }
        }
        Assert.True(failures.Count == 0, string.Join("\n", failures));
        await AssertNothingChangedAsync();
    }

    [Fact]
    public async Task MessageBodiesAreBytesAndComeBackExactlyWhateverTheirText()
    {
        // A message's body is not text to the server: invalid text in it is published and delivered byte for byte
        // (as base64, since it is not UTF-8 or holds an escape that is its own text).
        var a = await _client.CreateTopicAsync();
        var b = await _client.CreateTopicAsync();
        var published = new List<byte[]>();
        foreach (var text in BadTexts())
        {
            var body = text.In("""{"text":"<?>"}""");
            var one = await SendAsync(Request("POST", $"/ps/topics/{a}", body, "application/json"));
            var many = await SendAsync(Request("POST", $"/ps/topics/publish?topics={a},{b}", body, "application/json"));
            Assert.True(one?.Status == 201 && many?.Status == 201, $"{text}: {one?.Status} {many?.Status}");
            published.Add(body);
            published.Add(body);
        }
        foreach (var topic in new[] { a, b })
        {
            var poll = await _client.PollAsync($"topics={topic}:1&timeout=0");
            var expected = topic == a ? published : published.Where((_, i) => i % 2 == 1).ToList();
            Assert.Equal(expected.Count, poll.Messages.Count);
            for (var i = 0; i < expected.Count; i++)
            {
                Assert.Equal(expected[i], poll.Messages[i].Body);
            }
        }
    }

    public static TheoryData<string> FrameTemplates => new()
    {
        """{"type":"publish","id":"<?>","topicId":{topic},"body":"x"}""",
        """{"type":"<?>","id":"f","topicId":{topic},"body":"x"}""",
        """{"type":"publish","id":"f","topicId":{topic},"body":"<?>"}""",
        """{"type":"publish","id":"f","topics":"<?>","body":"x"}""",
        """{"type":"publish","id":"f","topicId":{topic},"body":"x","contentType":"<?>"}""",
        """{"type":"publish","id":"f","topicId":{topic},"body":"x","encoding":"<?>"}""",
        """{"type":"publish","id":"f","topicId":{topic},"body":"x","ifEpoch":"<?>"}""",
        """{"type":"publish","id":"f","topicId":{topic},"body":"x","idempotencyKey":"<?>"}""",
        """{"type":"subscribe","id":"f","topics":"<?>"}""",
        """{"type":"unsubscribe","id":"f","topics":"<?>"}""",
        """{"type":"publish","id":"f","topicId":{topic},"body":"x","<?>":1}""",
    };

    /// <summary>
    /// A frame whose JSON holds a lone surrogate escape is a <c>problem</c> frame naming the field (a property
    /// name that is not text names no known field, and is ignored as unknown properties are); a text frame
    /// whose bytes are not UTF-8 is closed by the WebSocket layer with 1007 (RFC 6455). The socket never drops
    /// without a close frame, and nothing is published.
    /// </summary>
    [Theory]
    [MemberData(nameof(FrameTemplates))]
    public async Task AWebSocketFrameWithInvalidTextIsAProblemFrameNamingTheFieldOrAClose(string template)
    {
        var field = JsonDocument.Parse(template.Replace("<?>", "MARK").Replace("{topic}", "1")).RootElement
            .EnumerateObject().First(p => p.Name == "MARK" || p.Value.ValueKind == JsonValueKind.String && p.Value.GetString() == "MARK").Name;
        var frameTemplate = template.Replace("{topic}", $"{_other}");
        var failures = new List<string>();
        await using var socket = await LaharsubSocket.ConnectAsync(_server.ApiAddress, "");
        var open = socket;
        await open.ReceiveAsync("subscribed");
        LaharsubSocket? fresh = null;
        try
        {
            foreach (var text in BadTexts())
            {
                var frame = text.In(frameTemplate);
                var utf8 = System.Text.Unicode.Utf8.IsValid(frame);
                await open.SendAsync(frame, WebSocketMessageType.Text);
                if (!utf8)
                {
                    // The WebSocket layer checks a text frame's UTF-8, sends a close frame with 1007 and closes the
                    // connection (RFC 6455, "Fail the WebSocket Connection"), perhaps before the client answers it.
                    var before = new List<JsonElement>();
                    try
                    {
                        before = (await open.ReceiveCloseAsync()).Before;
                    }
                    catch (WebSocketException) when (open.Socket.CloseStatus is not null)
                    {
                    }
                    if (open.Socket.CloseStatus != WebSocketCloseStatus.InvalidPayloadData || before.Count != 0)
                    {
                        failures.Add($"{text}: closed {open.Socket.CloseStatus} after {before.Count} frames");
                    }
                    if (fresh is not null)
                    {
                        await fresh.DisposeAsync();
                    }
                    open = fresh = await LaharsubSocket.ConnectAsync(_server.ApiAddress, "");
                    await open.ReceiveAsync("subscribed");
                    continue;
                }
                JsonElement answer;
                try
                {
                    answer = await open.ReceiveAsync();
                }
                catch (Exception failure) when (failure is Xunit.Sdk.XunitException or WebSocketException or TimeoutException)
                {
                    failures.Add($"{text}: no answer ({failure.Message})");
                    break;
                }
                if (field == "MARK")
                {
                    // An unknown property, whatever its name, is ignored: the frame is published as it would be without it.
                    if (answer.GetProperty("type").GetString() != "published")
                    {
                        failures.Add($"{text}: {answer}");
                    }
                    continue;
                }
                if (answer.GetProperty("type").GetString() != "problem"
                    || answer.GetProperty("problem").GetProperty("status").GetInt32() != 400
                    || !answer.GetProperty("problem").GetProperty("errors").TryGetProperty(field, out _)
                    || (field != "id" && answer.GetProperty("id").GetString() != "f")
                    || (field == "id" && answer.TryGetProperty("id", out _)))
                {
                    failures.Add($"{text}: {answer}");
                }
            }
            // The socket still answers.
            await open.SendAsync($$"""{"type":"subscribe","id":"last","topics":"{{_topic}}"}""");
            Assert.Equal("last", (await open.ReceiveAsync("subscribed")).GetProperty("id").GetString());
        }
        finally
        {
            if (fresh is not null)
            {
                await fresh.DisposeAsync();
            }
        }
        Assert.True(failures.Count == 0, string.Join("\n", failures.Take(30)));
        Assert.Equal(field == "MARK" ? BadTexts().Count(t => System.Text.Unicode.Utf8.IsValid(t.In(frameTemplate))) : 0,
            (await _client.GetTopicAsync(_other)).GetProperty("lastMessageId").GetInt64());
        await AssertNothingChangedAsync();
    }

    private static byte[] Request(string method, string target, byte[]? body = null, string? contentType = null, string accept = "application/json", string headers = "")
    {
        var head = $"{method} {target} HTTP/1.1\r\nHost: fuzz\r\nAccept: {accept}\r\nConnection: close\r\n{headers}";
        if (contentType is not null)
        {
            head += $"Content-Type: {contentType}\r\n";
        }
        if (body is not null)
        {
            head += $"Content-Length: {body.Length}\r\n";
        }
        return [.. Encoding.Latin1.GetBytes(head + "\r\n"), .. body ?? []];
    }

    /// <summary>Enough failures to see what is wrong: the rest of the cases are not sent (an event stream the server took waits out its bound).</summary>
    private const int EnoughFailures = 20;

    /// <summary>The answer, or null when there was none within 5 s or the connection dropped without one.</summary>
    private async Task<RawResponse?> SendAsync(byte[] request)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        try
        {
            return await RawHttp.ExchangeAsync(_server.BaseAddress, request, timeout.Token);
        }
        catch (OperationCanceledException)
        {
            return null;
        }
    }

    private async Task ExpectStatusAsync(List<string> failures, string what, byte[] request, int status)
    {
        if (failures.Count >= EnoughFailures)
        {
            return;
        }
        var response = await SendAsync(request);
        if (response is null)
        {
            failures.Add($"{what}: no answer within 5 s or the connection dropped: {RawHttp.Printable(request)}");
        }
        else if (response.Status != status)
        {
            failures.Add($"{what}: {response.Status} {response.BodyText}");
        }
    }

    private async Task ExpectProblemAsync(List<string> failures, string what, byte[] request, string field)
    {
        if (failures.Count >= EnoughFailures)
        {
            return;
        }
        var response = await SendAsync(request);
        if (response is null)
        {
            failures.Add($"{what}: no answer within 5 s or the connection dropped: {RawHttp.Printable(request)}");
            return;
        }
        if (response.Status != 400 || response.Header("Content-Type") != "application/problem+json")
        {
            failures.Add($"{what}: {response.Status} {response.Header("Content-Type")} {response.BodyText}");
            return;
        }
        using var problem = JsonDocument.Parse(response.Body);
        if (!problem.RootElement.TryGetProperty("errors", out var errors) || !errors.TryGetProperty(field, out _))
        {
            failures.Add($"{what}: the problem does not name '{field}': {response.BodyText}");
        }
    }

    /// <summary>No topic created, no message published, nobody present, no presence event, and no error logged.</summary>
    private async Task AssertNothingChangedAsync()
    {
        Assert.Equal(1, (await _client.GetTopicAsync(_topic)).GetProperty("lastMessageId").GetInt64());
        var listing = JsonDocument.Parse(await _client.GetStringAsync("topics?limit=100").WaitAsync(WireClient.Bound)).RootElement;
        Assert.Equal([_topic, _other, _room, _companion], listing.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()).Order());
        Assert.Equal(0, (await Presence.PresenceClient.MembersAsync(_client, _room)).Occupancy);
        Assert.Empty(await Presence.PresenceClient.EventsAsync(_client, _companion));
        Assert.DoesNotContain(_logs.Entries, entry => entry.Level >= LogLevel.Error || entry.Exception is not null);
    }
}
