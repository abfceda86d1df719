using System.Text.Json;
using Laharsub.Testing;

namespace Laharsub.GeneratedClients.Tests;

/// <summary>
/// What every .NET scenario did, checked against its printed outcome and against what the server stored
/// (read with plain HTTP requests, not through the generated client).
/// </summary>
internal static class ScenarioChecks
{
    public static async Task AssertOutcomeAsync(HostProcess server, JsonElement outcome, string textContentType, string textBody)
    {
        var plain = outcome.GetProperty("plain").GetInt64();
        var room = outcome.GetProperty("room").GetInt64();
        var expected = new (long, long, string?, string?)[]
        {
            (plain, 1L, "application/json", """{"greeting":"hello","count":2}"""),
            (plain, 2L, textContentType, textBody),
            (plain, 3L, "application/json", """{"to":"both"}"""),
            (room, 1L, "application/json", """{"to":"both"}"""),
        };

        var stored = await StoredAsync(server, plain, room);
        var delivered = outcome.GetProperty("delivered").EnumerateArray()
            .Select(m => (m.GetProperty("TopicId").GetInt64(), m.GetProperty("MessageId").GetInt64(), m.GetProperty("ContentType").GetString(), m.GetProperty("Body").GetString()));

        Assert.False(await HasLabelAsync(server, plain));
        Assert.True(outcome.GetProperty("roomPresence").GetBoolean(), outcome.ToString());
        Assert.Equal([1L, 2L], outcome.GetProperty("published").EnumerateArray().Select(id => id.GetInt64()));
        Assert.Equal([(plain, 3L), (room, 1L)], outcome.GetProperty("many").EnumerateArray().Select(m => (m.GetProperty("TopicId").GetInt64(), m.GetProperty("MessageId").GetInt64())));
        Assert.Equal(expected, stored.Select(Normalized));
        Assert.Equal(expected, delivered.Select(Normalized));
        Assert.Equal(1, outcome.GetProperty("occupancy").GetInt32());
        var member = Assert.Single(outcome.GetProperty("members").EnumerateArray());
        Assert.Equal("alice", member.GetProperty("Member").GetString());
        Assert.Equal("Alice", JsonDocument.Parse(member.GetProperty("Data").GetString()!).RootElement.GetProperty("name").GetString());
        // The problem's detail reaches the caller, and the exception's message says what went wrong (not a type's name).
        Assert.Contains("Topic 999999 does not exist", outcome.GetProperty("notFound").GetString(), StringComparison.Ordinal);
        Assert.Contains("label: ", outcome.GetProperty("invalid").GetString(), StringComparison.Ordinal);
        Assert.DoesNotContain("ProblemDetails", outcome.GetProperty("notFound").GetString(), StringComparison.Ordinal);
    }

    /// <summary>JSON bodies compared as JSON (a generator may space them otherwise), others as text.</summary>
    private static (long, long, string?, string?) Normalized((long TopicId, long MessageId, string? ContentType, string? Body) message) =>
        message.ContentType == "application/json" && message.Body is not null
            ? message with { Body = JsonSerializer.Serialize(JsonDocument.Parse(message.Body).RootElement) }
            : message;

    private static async Task<bool> HasLabelAsync(HostProcess server, long topicId)
    {
        using var http = new HttpClient { BaseAddress = server.ApiAddress, Timeout = TimeSpan.FromSeconds(10) };
        using var topic = JsonDocument.Parse(await http.GetStringAsync($"topics/{topicId}"));
        return topic.RootElement.TryGetProperty("label", out _);
    }

    private static async Task<List<(long, long, string?, string?)>> StoredAsync(HostProcess server, long plain, long room)
    {
        using var http = new HttpClient { BaseAddress = server.ApiAddress, Timeout = TimeSpan.FromSeconds(10) };
        using var answer = JsonDocument.Parse(await http.GetStringAsync($"subscriptions?topics={plain}:1,{room}:1&timeout=0"));
        return answer.RootElement.GetProperty("messages").EnumerateArray()
            .Select(m => (m.GetProperty("topicId").GetInt64(), m.GetProperty("messageId").GetInt64(), m.GetProperty("contentType").GetString(), m.GetProperty("body").GetString()))
            .ToList();
    }
}
