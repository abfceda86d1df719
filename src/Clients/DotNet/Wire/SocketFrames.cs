using System.Buffers;
using System.Globalization;
using System.Text.Json;
using System.Text.Unicode;

namespace Laharsub.Client.Wire;

/// <summary>The frames this client sends on a <c>laharsub.v1</c> WebSocket (docs/protocol.md, "WebSocket"), and its frame ids.</summary>
internal static class SocketFrames
{
    /// <summary>A <c>subscribe</c> or <c>unsubscribe</c> frame, id <c>c{sequence}</c>; <paramref name="topics"/> in the compact syntax.</summary>
    public static byte[] Change(bool subscribe, long sequence, string topics)
    {
        var output = new ArrayBufferWriter<byte>(64 + topics.Length);
        using (var json = new Utf8JsonWriter(output))
        {
            json.WriteStartObject();
            json.WriteString("type"u8, subscribe ? "subscribe"u8 : "unsubscribe"u8);
            json.WriteString("id"u8, ChangeId(sequence));
            json.WriteString("topics"u8, topics);
            json.WriteEndObject();
        }
        return output.WrittenSpan.ToArray();
    }

    /// <summary>
    /// A <c>publish</c> frame to one topic: the body as text when it is UTF-8 (it comes back byte for byte),
    /// else as base64; <c>ifEpoch</c> as <c>If-Match</c> would be, <c>idempotencyKey</c> as <c>Idempotency-Key</c>.
    /// </summary>
    public static byte[] Publish(string id, long topicId, ReadOnlySpan<byte> body, string contentType, string? ifEpoch, string? idempotencyKey) =>
        Publish(id, topicId, topics: null, body, contentType, ifEpoch, idempotencyKey);

    /// <summary>A <c>publish</c> frame to several topics, <paramref name="topics"/> in the syntax of REST's <c>topics</c> query (<c>14,15~epoch</c>).</summary>
    public static byte[] PublishMany(string id, string topics, ReadOnlySpan<byte> body, string contentType, string? idempotencyKey) =>
        Publish(id, topicId: 0, topics, body, contentType, ifEpoch: null, idempotencyKey);

    private static byte[] Publish(string id, long topicId, string? topics, ReadOnlySpan<byte> body, string contentType, string? ifEpoch, string? idempotencyKey)
    {
        var output = new ArrayBufferWriter<byte>(128 + (topics?.Length ?? 0) + body.Length * 4 / 3);
        using (var json = new Utf8JsonWriter(output))
        {
            json.WriteStartObject();
            json.WriteString("type"u8, "publish"u8);
            json.WriteString("id"u8, id);
            if (topics is null)
            {
                json.WriteNumber("topicId"u8, topicId);
            }
            else
            {
                json.WriteString("topics"u8, topics);
            }
            json.WriteString("contentType"u8, contentType);
            if (Utf8.IsValid(body))
            {
                json.WriteString("encoding"u8, "text"u8);
                json.WriteString("body"u8, body);
            }
            else
            {
                json.WriteString("encoding"u8, "base64"u8);
                json.WriteBase64String("body"u8, body);
            }
            if (ifEpoch is not null)
            {
                json.WriteString("ifEpoch"u8, ifEpoch);
            }
            if (idempotencyKey is not null)
            {
                json.WriteString("idempotencyKey"u8, idempotencyKey);
            }
            json.WriteEndObject();
        }
        return output.WrittenSpan.ToArray();
    }

    public static string ChangeId(long sequence) => string.Create(CultureInfo.InvariantCulture, $"c{sequence}");

    public static string PublishId(long sequence) => string.Create(CultureInfo.InvariantCulture, $"p{sequence}");

    /// <summary>The sequence number of a change frame's id (<c>c12</c> → 12); <see langword="null"/> for no id or another kind.</summary>
    public static long? ChangeSequence(string? id) =>
        id is ['c', .. var digits] && long.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out var sequence) ? sequence : null;

    public static bool IsPublishId(string? id) => id is ['p', ..];
}
