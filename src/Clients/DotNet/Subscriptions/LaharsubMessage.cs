using System.Diagnostics.CodeAnalysis;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace Laharsub.Client;

/// <summary>A message delivered by a subscription: its ids, when it was published, its content type and its exact bytes.</summary>
public sealed class LaharsubMessage : SubscriptionEvent
{
    internal LaharsubMessage(long topicId, string? epoch, long messageId, DateTimeOffset publishedAt, string contentType, ReadOnlyMemory<byte> body)
        : base(topicId, epoch)
    {
        MessageId = messageId;
        PublishedAt = publishedAt;
        ContentType = contentType;
        Body = body;
    }

    /// <summary>The message's id within its topic.</summary>
    public long MessageId { get; }

    /// <summary>When the server accepted the message (millisecond precision, UTC).</summary>
    public DateTimeOffset PublishedAt { get; }

    /// <summary>The content type it was published with, exactly as given.</summary>
    public string ContentType { get; }

    /// <summary>The message's bytes, exactly as published. The memory belongs to this message and stays valid.</summary>
    public ReadOnlyMemory<byte> Body { get; }

    /// <summary>The body decoded as UTF-8 text.</summary>
    public string GetString() => Encoding.UTF8.GetString(Body.Span);

    /// <summary>The body deserialized from JSON with <paramref name="options"/> (the web defaults when <see langword="null"/>).</summary>
    /// <typeparam name="T">The type to deserialize.</typeparam>
    /// <param name="options">Serializer options; <see langword="null"/> uses <see cref="JsonSerializerDefaults.Web"/>.</param>
    [RequiresUnreferencedCode("Reflection-based JSON; use the JsonTypeInfo<T> overload when trimming.")]
    [RequiresDynamicCode("Reflection-based JSON; use the JsonTypeInfo<T> overload for native AOT.")]
    public T? Deserialize<T>(JsonSerializerOptions? options = null) =>
        JsonSerializer.Deserialize<T>(Body.Span, options ?? LaharsubClient.WebJsonOptions);

    /// <summary>The body deserialized from JSON with source-generated metadata (trimming and AOT safe).</summary>
    /// <typeparam name="T">The type to deserialize.</typeparam>
    /// <param name="typeInfo">The metadata of <typeparamref name="T"/>, e.g. <c>MyJsonContext.Default.Order</c>.</param>
    public T? Deserialize<T>(JsonTypeInfo<T> typeInfo)
    {
        ArgumentNullException.ThrowIfNull(typeInfo);
        return JsonSerializer.Deserialize(Body.Span, typeInfo);
    }

    /// <inheritdoc/>
    public override string ToString() => $"Message {TopicId}/{MessageId} ({ContentType}, {Body.Length} bytes)";
}
