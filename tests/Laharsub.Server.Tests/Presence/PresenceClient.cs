using Laharsub.Testing;
using System.Net;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Presence;

/// <summary>The presence calls of the wire protocol (docs/protocol.md, "Presence"), for tests.</summary>
internal static class PresenceClient
{
    /// <summary>Creates a topic with presence; returns it and its companion topic.</summary>
    public static async Task<(long Topic, long Companion)> CreatePresenceTopicAsync(this HttpClient client, string? label = null)
    {
        var body = label is null ? """{"presence":true}""" : $$"""{"presence":true,"label":"{{label}}"}""";
        using var response = await client.PostAsync("topics", new StringContent(body, Encoding.UTF8, "application/json")).WaitAsync(WireClient.Bound);
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.Created, $"create answered {(int)response.StatusCode}: {text}");
        var json = JsonDocument.Parse(text).RootElement;
        Assert.True(json.GetProperty("presence").GetBoolean());
        return (json.GetProperty("topicId").GetInt64(), json.GetProperty("presenceTopicId").GetInt64());
    }

    /// <summary>The member ids and data of the first page, and the occupancy.</summary>
    public static async Task<(int Occupancy, List<(string Member, string? Data)> Members, string? Next)> MembersAsync(this HttpClient client, long topic, string query = "")
    {
        using var response = await client.GetAsync($"topics/{topic}/presence{query}").WaitAsync(WireClient.Bound);
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"presence answered {(int)response.StatusCode}: {text}");
        var json = JsonDocument.Parse(text).RootElement;
        Assert.Equal(topic, json.GetProperty("topicId").GetInt64());
        var members = json.GetProperty("members").EnumerateArray()
            .Select(m => (m.GetProperty("member").GetString()!, m.GetProperty("data").ValueKind == JsonValueKind.Null ? null : m.GetProperty("data").GetRawText()))
            .ToList();
        var next = json.GetProperty("next");
        return (json.GetProperty("occupancy").GetInt32(), members, next.ValueKind == JsonValueKind.Null ? null : next.GetString());
    }

    /// <summary>The presence events retained on a companion topic, in order: type, member and occupancy.</summary>
    public static async Task<List<(string Type, string Member, int Occupancy)>> EventsAsync(this HttpClient client, long companion)
    {
        var poll = await client.PollAsync($"topics={companion}:1&timeout=0");
        if (poll.Status == HttpStatusCode.NoContent)
        {
            return [];
        }
        Assert.Equal(HttpStatusCode.OK, poll.Status);
        return poll.Messages.Select(Event).ToList();
    }

    /// <summary>A presence event's type, member and occupancy.</summary>
    public static (string Type, string Member, int Occupancy) Event(ReceivedMessage message)
    {
        Assert.Equal("application/json", message.ContentType);
        var json = JsonDocument.Parse(message.Text).RootElement;
        return (json.GetProperty("type").GetString()!, json.GetProperty("member").GetString()!, json.GetProperty("occupancy").GetInt32());
    }

    /// <summary>Moves the clock on by <paramref name="total"/> in steps, giving the server time to act after each (timers, renewals).</summary>
    public static async Task AdvanceInStepsAsync(this FakeTimeProvider clock, TimeSpan total, TimeSpan step)
    {
        for (var advanced = TimeSpan.Zero; advanced < total; advanced += step)
        {
            clock.Advance(step);
            await Task.Delay(20);
        }
    }
}
