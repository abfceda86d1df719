using System.Text.Json;
using Laharsub.Server.Tests.Support;

namespace Laharsub.Server.Tests.Streams;

/// <summary>What the stream tests compare against: a topic's epoch and a message as the long poll's JSON carries it.</summary>
internal static class StreamWire
{
    public static async Task<string> EpochAsync(this HttpClient client, long topicId) =>
        (await client.GetTopicAsync(topicId)).GetProperty("epoch").GetString()!;

    /// <summary>Message <paramref name="messageId"/> of the topic exactly as a JSON poll answer's <c>messages</c> array has it.</summary>
    public static async Task<string> PolledMessageJsonAsync(this HttpClient client, long topicId, long messageId)
    {
        var text = await client.GetStringAsync($"subscriptions?topics={topicId}:{messageId}&timeout=0").WaitAsync(WireClient.Bound);
        using var answer = JsonDocument.Parse(text);
        var first = answer.RootElement.GetProperty("messages")[0];
        Assert.Equal(messageId, first.GetProperty("messageId").GetInt64());
        return first.GetRawText();
    }

    /// <summary>The text body of a message's JSON (encoding text).</summary>
    public static string Text(this JsonElement message)
    {
        Assert.Equal("text", message.GetProperty("encoding").GetString());
        return message.GetProperty("body").GetString()!;
    }
}
