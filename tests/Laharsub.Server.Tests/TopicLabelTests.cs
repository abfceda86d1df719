using System.Net;
using System.Text.Json;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

public sealed class TopicLabelTests
{
    [Fact]
    public async Task ATopicCreatedWithALabelShowsItAndIsFoundByIt()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var eu = await CreateAsync(client, """{"label":"orders-eu"}""");
        var us = await CreateAsync(client, """{"label":"orders-us"}""");
        var plain = await client.CreateTopicAsync();
        await CreateAsync(client, """{"label":"news"}""");

        var info = await client.GetTopicAsync(eu);
        var orders = await ListAsync(client, "topics?label=orders-*");
        var exact = await ListAsync(client, "topics?label=orders-us");
        var all = await ListAsync(client, "topics");

        Assert.Equal("orders-eu", info.GetProperty("label").GetString());
        Assert.Equal([eu, us], orders);
        Assert.Equal([us], exact);
        Assert.Contains(plain, all);
        Assert.False((await client.GetTopicAsync(plain)).TryGetProperty("label", out _));
    }

    [Fact]
    public async Task AFilteredListingPagesWithTheFilterInItsNextLink()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var labelled = new List<long>();
        for (var i = 0; i < 5; i++)
        {
            labelled.Add(await CreateAsync(client, """{"label":"room-a"}"""));
            await client.CreateTopicAsync();
        }

        using var first = JsonDocument.Parse(await client.GetStringAsync("topics?label=room-*&limit=2").WaitAsync(WireClient.Bound));
        var next = first.RootElement.GetProperty("next").GetString();

        Assert.Equal(labelled[..2], first.RootElement.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()));
        Assert.Contains("label=room-%2A", next);
        Assert.Equal(labelled, await ListAsync(client, "topics?label=room-*&limit=2"));
    }

    public static TheoryData<string?, string, string> BadBodies => new()
    {
        { "application/json", """{"label":"9lives"}""", "label" },
        { "application/json", """{"label":"has space"}""", "label" },
        { "application/json", $$"""{"label":"{{new string('a', 101)}}"}""", "label" },
        { "application/json", """{"label":42}""", "label" },
        { "application/json", """{"name":"orders"}""", "name" },
        { "application/json", """["orders"]""", "body" },
        { "application/json", "{\"label\":\"orders\"", "body" },
        { "application/json", "null {}", "body" },
        { "text/plain", "orders", "Content-Type" },
        // Lone surrogates: JSON that parses, whose text is not Unicode.
        { "application/json", """{"label":"orders\ud800"}""", "label" },
        { "application/json", """{"label":"\udc00\ud800"}""", "label" },
        { "application/json", """{"\udc00":1}""", "body" },
    };

    [Theory]
    [MemberData(nameof(BadBodies))]
    public async Task ABadTopicDescriptionIs400NamingTheFieldAndCreatesNothing(string? contentType, string body, string field)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, "topics")
        {
            Content = new StringContent(body, Encoding.UTF8, contentType!),
        });

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.True(problem.GetProperty("errors").TryGetProperty(field, out _), problem.ToString());
        Assert.Empty(await ListAsync(client, "topics"));
    }

    [Fact]
    public async Task AJsonNullBodyCreatesAnUnlabelledTopicAsNoBodyDoes()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();

        // What NSwag's client sends for the optional body left out.
        var topic = await CreateAsync(client, " null ");

        Assert.False((await client.GetTopicAsync(topic)).TryGetProperty("label", out _));
        Assert.Equal([topic], await ListAsync(client, "topics"));
    }

    [Fact]
    public async Task ABadLabelPatternInAListingIs400()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();

        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Get, "topics?label=a%20b"));

        Assert.Equal(HttpStatusCode.BadRequest, status);
        Assert.Contains("label pattern", problem.GetProperty("errors").GetProperty("label")[0].GetString());
    }

    private static async Task<long> CreateAsync(HttpClient client, string json)
    {
        using var response = await client.PostAsync("topics", new StringContent(json, Encoding.UTF8, "application/json")).WaitAsync(WireClient.Bound);
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.Created, text);
        using var created = JsonDocument.Parse(text);
        return created.RootElement.GetProperty("topicId").GetInt64();
    }

    private static async Task<List<long>> ListAsync(HttpClient client, string uri)
    {
        var ids = new List<long>();
        string? next = uri;
        while (next is not null)
        {
            using var page = JsonDocument.Parse(await client.GetStringAsync(next).WaitAsync(WireClient.Bound));
            ids.AddRange(page.RootElement.GetProperty("topics").EnumerateArray().Select(t => t.GetProperty("topicId").GetInt64()));
            next = page.RootElement.TryGetProperty("next", out var link) ? link.GetString() : null;
        }
        return ids;
    }
}
