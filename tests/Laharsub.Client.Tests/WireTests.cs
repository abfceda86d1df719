using System.Net.Http.Headers;
using System.Text;
using Laharsub.Client.Wire;
using Laharsub.Testing;
using Microsoft.AspNetCore.WebUtilities;

namespace Laharsub.Client.Tests;

/// <summary>The streaming readers against real server answers, checked with an independent parser and with worst-case chunking.</summary>
public sealed class WireTests
{
    [Fact]
    public async Task MultipartAnswersParseAsAnIndependentMultipartParserSeesThem()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3);
        var (topic, _) = await PublishAssortedMessagesAsync(server);
        using var http = server.CreateClient();
        var raw = await FetchPollAsync(http, topic, "multipart/mixed");

        var expected = new List<string>();
        var boundary = raw.ContentType.Parameters.Single(p => p.Name == "boundary").Value!.Trim('"');
        var multipart = new MultipartReader(boundary, new MemoryStream(raw.Body));
        while (await multipart.ReadNextSectionAsync().WaitAsync(TestSupport.Timeout) is { } section)
        {
            var body = new MemoryStream();
            await section.Body.CopyToAsync(body).WaitAsync(TestSupport.Timeout);
            expected.Add(section.Headers!.TryGetValue("Laharsub-Notice", out var notice)
                ? $"notice {notice} {NoticeFields(body.ToArray())}"
                : $"message {section.Headers["Laharsub-Topic-Id"]}/{section.Headers["Laharsub-Message-Id"]} {section.ContentType} {section.Headers["Laharsub-Published-At"]} {Convert.ToHexString(body.ToArray())}");
        }
        var actual = (await ReadAllAsync(new MultipartPollReader(new MemoryStream(raw.Body), boundary))).Select(e => e switch
        {
            GapNotice gap => $"notice gap {gap.TopicId} {gap.FromMessageId}..{gap.ToMessageId}",
            LaharsubMessage m => $"message {m.TopicId}/{m.MessageId} {m.ContentType} {m.PublishedAt.UtcDateTime:yyyy-MM-dd'T'HH:mm:ss.fff'Z'} {Convert.ToHexString(m.Body.Span)}",
            _ => e.ToString(),
        });

        Assert.Equal(4, expected.Count);
        Assert.Equal(expected, actual);
    }

    private static string NoticeFields(byte[] json)
    {
        using var notice = System.Text.Json.JsonDocument.Parse(json);
        var root = notice.RootElement;
        return $"{root.GetProperty("topicId")} {root.GetProperty("fromMessageId")}..{root.GetProperty("toMessageId")}";
    }

    [Theory]
    [InlineData("multipart/mixed")]
    [InlineData("application/json")]
    public async Task AnswersArrivingOneByteAtATimeParseTheSameAsWhole(string format)
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3);
        var (topic, published) = await PublishAssortedMessagesAsync(server);
        using var http = server.CreateClient();
        var raw = await FetchPollAsync(http, topic, format);

        var whole = Describe(await ReadAllAsync(CreateReader(raw, new MemoryStream(raw.Body))));
        var trickled = Describe(await ReadAllAsync(CreateReader(raw, new OneByteStream(raw.Body))));

        Assert.Equal(whole, trickled);
        Assert.Equal([$"gap {topic} 1..{published.Count - 3}", .. published.TakeLast(3).Select((body, i) => $"message {topic}/{published.Count - 2 + i} {Convert.ToHexString(body)}")], whole);
    }

    [Fact]
    public async Task BothFormatsDeliverTheSameEvents()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3);
        var (topic, _) = await PublishAssortedMessagesAsync(server);
        using var http = server.CreateClient();

        var multipart = await FetchPollAsync(http, topic, "multipart/mixed");
        var json = await FetchPollAsync(http, topic, "application/json");

        Assert.Equal(
            Describe(await ReadAllAsync(CreateReader(multipart, new MemoryStream(multipart.Body)))),
            Describe(await ReadAllAsync(CreateReader(json, new MemoryStream(json.Body)))));
    }

    [Fact]
    public async Task ATruncatedAnswerIsReportedAsMalformedNotAsFewerEvents()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3);
        var (topic, _) = await PublishAssortedMessagesAsync(server);
        using var http = server.CreateClient();

        foreach (var format in new[] { "multipart/mixed", "application/json" })
        {
            var raw = await FetchPollAsync(http, topic, format);
            var truncated = raw.Body.AsSpan(0, raw.Body.Length - 3).ToArray();
            await Assert.ThrowsAsync<InvalidDataException>(() => ReadAllAsync(CreateReader(raw, new MemoryStream(truncated))));
        }
    }

    [Fact]
    public async Task AValueOfTheWrongTypeOrFormatIsReportedAsMalformed()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 3);
        var (topic, _) = await PublishAssortedMessagesAsync(server);
        using var http = server.CreateClient();

        // Well-formed JSON whose values are not what the protocol says: Utf8JsonReader throws
        // InvalidOperationException or FormatException for these, not JsonException.
        foreach (var format in new[] { "multipart/mixed", "application/json" })
        {
            var raw = await FetchPollAsync(http, topic, format);
            var text = Encoding.Latin1.GetString(raw.Body);
            foreach (var mangled in new[] { text.Replace($"\"topicId\":{topic}", $"\"topicId\":\"{topic}\""), text.Replace("\"publishedAt\":\"", "\"publishedAt\":\"x") })
            {
                if (mangled == text)
                {
                    continue; // this format does not carry the value in JSON
                }
                await Assert.ThrowsAsync<InvalidDataException>(() => ReadAllAsync(CreateReader(raw, new MemoryStream(Encoding.Latin1.GetBytes(mangled)))));
            }
        }
    }

    /// <summary>Five messages (the first two evicted, so the answer starts with a gap): text, binary, and a large one that spans many reads.</summary>
    private static async Task<(long Topic, List<byte[]> Published)> PublishAssortedMessagesAsync(LaharsubTestServer server)
    {
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var random = new Random(7);
        var large = new byte[100_000];
        random.NextBytes(large);
        List<(byte[] Body, string ContentType)> messages =
        [
            (Encoding.UTF8.GetBytes("evicted"), "text/plain"),
            (Encoding.UTF8.GetBytes("evicted too"), "text/plain"),
            (Encoding.UTF8.GetBytes("{\"text\":\"Grüße \\\"\\u00e9\\\" <&>\"}"), "application/json"),
            ([13, 10, 45, 45, 13, 10, 0, 255, 13], "application/octet-stream"),
            (large, "image/png"),
        ];
        foreach (var (body, contentType) in messages)
        {
            await client.PublishAsync(topic, body, contentType).WaitAsync(TestSupport.Timeout);
        }
        return (topic, messages.Select(m => m.Body).ToList());
    }

    private static async Task<(MediaTypeHeaderValue ContentType, byte[] Body)> FetchPollAsync(HttpClient http, long topic, string accept)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}:1&timeout=0");
        request.Headers.Accept.ParseAdd(accept);
        using var response = await http.SendAsync(request).WaitAsync(TestSupport.Timeout);
        response.EnsureSuccessStatusCode();
        return (response.Content.Headers.ContentType!, await response.Content.ReadAsByteArrayAsync().WaitAsync(TestSupport.Timeout));
    }

    private static IPollReader CreateReader((MediaTypeHeaderValue ContentType, byte[] Body) raw, Stream stream) =>
        raw.ContentType.MediaType == "application/json"
            ? new JsonPollReader(stream)
            : new MultipartPollReader(stream, raw.ContentType.Parameters.Single(p => p.Name == "boundary").Value!.Trim('"'));

    private static async Task<List<SubscriptionEvent>> ReadAllAsync(IPollReader reader)
    {
        using (reader)
        {
            var events = new List<SubscriptionEvent>();
            while (await reader.ReadAsync(CancellationToken.None).AsTask().WaitAsync(TestSupport.Timeout) is { } item)
            {
                events.Add(item);
            }
            return events;
        }
    }

    private static List<string> Describe(List<SubscriptionEvent> events) => events.Select(e => e switch
    {
        GapNotice gap => $"gap {gap.TopicId} {gap.FromMessageId}..{gap.ToMessageId}",
        LaharsubMessage m => $"message {m.TopicId}/{m.MessageId} {Convert.ToHexString(m.Body.Span)}",
        _ => e.ToString()!,
    }).ToList();

    /// <summary>Hands out one byte per read: every item straddles reads, the worst case for an incremental parser.</summary>
    private sealed class OneByteStream(byte[] data) : MemoryStream(data)
    {
        public override int Read(byte[] buffer, int offset, int count) => base.Read(buffer, offset, Math.Min(count, 1));

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            base.ReadAsync(buffer[..Math.Min(buffer.Length, 1)], cancellationToken);
    }
}
