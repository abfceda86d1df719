namespace Laharsub.Server.Storage;

/// <summary>
/// A published message with its wire forms, encoded once when it was published so that every
/// subscriber is sent the very same bytes.
/// </summary>
public sealed class Message
{
    private readonly byte[] _multipartPart;
    private readonly int _bodyOffset;
    private readonly int _bodyLength;

    internal Message(long topicId, long messageId, DateTimeOffset publishedAt, string contentType,
        byte[] multipartPart, int bodyOffset, int bodyLength, byte[] jsonElement)
    {
        TopicId = topicId;
        MessageId = messageId;
        PublishedAt = publishedAt;
        ContentType = contentType;
        _multipartPart = multipartPart;
        _bodyOffset = bodyOffset;
        _bodyLength = bodyLength;
        JsonElement = jsonElement;
    }

    public long TopicId { get; }
    public long MessageId { get; }
    public DateTimeOffset PublishedAt { get; }
    public string ContentType { get; }

    /// <summary>The body, byte for byte as published (a slice of the multipart part, not a copy).</summary>
    public ReadOnlyMemory<byte> Body => _multipartPart.AsMemory(_bodyOffset, _bodyLength);

    /// <summary>The whole multipart part: delimiter, headers, body, CRLF.</summary>
    internal ReadOnlyMemory<byte> MultipartPart => _multipartPart;

    /// <summary>The message as one element of the JSON <c>messages</c> array.</summary>
    internal byte[] JsonElement { get; }
}
