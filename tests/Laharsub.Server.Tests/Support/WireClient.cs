using System.Net;
using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Tests.Support;

public sealed record ReceivedMessage(long TopicId, long MessageId, string ContentType, byte[] Body, string PublishedAt)
{
    public string Text => Encoding.UTF8.GetString(Body);
}

public sealed record ReceivedNotice(string Type, long TopicId, JsonElement Json)
{
    public long Get(string property) => Json.GetProperty(property).GetInt64();
}

public sealed record PollResponse(HttpStatusCode Status, HttpResponseMessage Response, IReadOnlyList<ReceivedNotice> Notices, IReadOnlyList<ReceivedMessage> Messages);

/// <summary>
/// Speaks the wire protocol with plain HttpClient and parses answers with independent parsers
/// (System.Text.Json; ASP.NET Core's MultipartReader), so the tests check the bytes the server sends.
/// </summary>
public static class WireClient
{
    public static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);

    public static async Task<long> CreateTopicAsync(this HttpClient client)
    {
        using var response = await client.PostAsync("topics", null).WaitAsync(Bound);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        return json.RootElement.GetProperty("topicId").GetInt64();
    }

    public static async Task<long> PublishAsync(this HttpClient client, long topicId, byte[] body, string? contentType = "application/octet-stream")
    {
        using var content = new ByteArrayContent(body);
        if (contentType is not null)
        {
            content.Headers.ContentType = System.Net.Http.Headers.MediaTypeHeaderValue.Parse(contentType);
        }
        using var response = await client.PostAsync($"topics/{topicId}", content).WaitAsync(Bound);
        Assert.True(response.StatusCode == HttpStatusCode.Created, $"publish answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync()}");
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal(topicId, json.RootElement.GetProperty("topicId").GetInt64());
        return json.RootElement.GetProperty("messageId").GetInt64();
    }

    public static Task<long> PublishTextAsync(this HttpClient client, long topicId, string text) =>
        client.PublishAsync(topicId, Encoding.UTF8.GetBytes(text), "text/plain; charset=utf-8");

    public static async Task<JsonElement> GetTopicAsync(this HttpClient client, long topicId)
    {
        using var response = await client.GetAsync($"topics/{topicId}").WaitAsync(Bound);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement.Clone();
    }

    public static async Task<PollResponse> PollAsync(this HttpClient client, string query, string? accept = "application/json", CancellationToken cancellationToken = default)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "subscriptions?" + query);
        if (accept is not null)
        {
            request.Headers.Accept.ParseAdd(accept);
        }
        var response = await client.SendAsync(request, cancellationToken).WaitAsync(Bound, cancellationToken);
        if (response.StatusCode != HttpStatusCode.OK)
        {
            return new PollResponse(response.StatusCode, response, [], []);
        }
        var mediaType = response.Content.Headers.ContentType!.MediaType;
        return mediaType == "application/json"
            ? ParseJson(response, await response.Content.ReadAsStringAsync(cancellationToken))
            : await ParseMultipartAsync(response, cancellationToken);
    }

    private static PollResponse ParseJson(HttpResponseMessage response, string text)
    {
        using var json = JsonDocument.Parse(text);
        var notices = json.RootElement.GetProperty("notices").EnumerateArray()
            .Select(n => new ReceivedNotice(n.GetProperty("type").GetString()!, n.GetProperty("topicId").GetInt64(), n.Clone()))
            .ToList();
        var messages = json.RootElement.GetProperty("messages").EnumerateArray().Select(m =>
        {
            var encoding = m.GetProperty("encoding").GetString();
            var body = encoding switch
            {
                "text" => Encoding.UTF8.GetBytes(m.GetProperty("body").GetString()!),
                "base64" => Convert.FromBase64String(m.GetProperty("body").GetString()!),
                _ => throw new Xunit.Sdk.XunitException($"unknown encoding '{encoding}'"),
            };
            return new ReceivedMessage(m.GetProperty("topicId").GetInt64(), m.GetProperty("messageId").GetInt64(),
                m.GetProperty("contentType").GetString()!, body, m.GetProperty("publishedAt").GetString()!);
        }).ToList();
        return new PollResponse(response.StatusCode, response, notices, messages);
    }

    private static async Task<PollResponse> ParseMultipartAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        var contentType = Microsoft.Net.Http.Headers.MediaTypeHeaderValue.Parse(response.Content.Headers.ContentType!.ToString());
        Assert.Equal("multipart/mixed", contentType.MediaType.Value);
        var boundary = HeaderUtilities.RemoveQuotes(contentType.Boundary).Value!;
        var reader = new MultipartReader(boundary, await response.Content.ReadAsStreamAsync(cancellationToken));
        var notices = new List<ReceivedNotice>();
        var messages = new List<ReceivedMessage>();
        while (await reader.ReadNextSectionAsync(cancellationToken) is { } section)
        {
            using var body = new MemoryStream();
            await section.Body.CopyToAsync(body, cancellationToken);
            var headers = section.Headers!;
            if (headers.TryGetValue("Laharsub-Notice", out var notice))
            {
                var json = JsonDocument.Parse(body.ToArray()).RootElement.Clone();
                Assert.Equal(notice.ToString(), json.GetProperty("type").GetString());
                Assert.Equal(headers["Laharsub-Topic-Id"].ToString(), json.GetProperty("topicId").GetInt64().ToString());
                notices.Add(new ReceivedNotice(notice.ToString(), json.GetProperty("topicId").GetInt64(), json));
            }
            else
            {
                messages.Add(new ReceivedMessage(long.Parse(headers["Laharsub-Topic-Id"]!), long.Parse(headers["Laharsub-Message-Id"]!),
                    section.ContentType!, body.ToArray(), headers["Laharsub-Published-At"].ToString()));
            }
        }
        return new PollResponse(response.StatusCode, response, notices, messages);
    }

    public static async Task<(HttpStatusCode Status, JsonElement Problem)> SendForProblemAsync(this HttpClient client, HttpRequestMessage request)
    {
        using var response = await client.SendAsync(request).WaitAsync(Bound);
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.Content.Headers.ContentType?.MediaType == "application/problem+json",
            $"expected a problem detail for {(int)response.StatusCode}, got '{response.Content.Headers.ContentType}': {text}");
        return (response.StatusCode, JsonDocument.Parse(text).RootElement.Clone());
    }
}
