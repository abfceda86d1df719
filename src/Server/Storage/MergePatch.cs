using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace Laharsub.Server.Storage;

/// <summary>
/// The documents of state topics (<see cref="TopicInfo.State"/>) and RFC 7396 merge patches, in one place for
/// every store and the delivery: applying a patch or a replacement with the size limit, telling why a body
/// is refused, and composing two patches into one. A document is a JSON object kept as its compact UTF-8
/// text; numbers and strings keep their text, so a number beyond double's range or precision comes back as sent.
/// </summary>
public static class MergePatch
{
    /// <summary>The content type of a merge patch (RFC 7396), and of a state topic's patch messages.</summary>
    public const string MediaType = "application/merge-patch+json";

    /// <summary>The content type of a state topic's replacement messages (the whole document) and of its document.</summary>
    public const string DocumentMediaType = "application/json";

    /// <summary>Duplicate keys are refused: which of two values a patch meant is a guess no store should make.</summary>
    private static readonly JsonDocumentOptions Strict = new() { AllowDuplicateProperties = false };

    /// <summary>Compact, and without escaping what JSON does not require, so the size limit counts the text as a client would write it.</summary>
    private static readonly JsonWriterOptions Compact = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true };

    /// <summary>The document of a new state topic: <c>{}</c>.</summary>
    public static ReadOnlyMemory<byte> EmptyDocument { get; } = "{}"u8.ToArray();

    /// <summary>Whether <paramref name="contentType"/> is <see cref="MediaType"/> (parameters and case aside).</summary>
    public static bool IsMergePatch(string? contentType)
    {
        if (contentType is null)
        {
            return false;
        }
        var end = contentType.IndexOf(';', StringComparison.Ordinal);
        return contentType.AsSpan(0, end < 0 ? contentType.Length : end).Trim().Equals(MediaType, StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>
    /// Applies <paramref name="patch"/> to <paramref name="document"/> (a document this type made):
    /// <see cref="PublishStatus.Published"/> with the new document's compact text, <see cref="PublishStatus.NotAnObject"/>
    /// when the patch is not one JSON object (or repeats a key, or nests deeper than 64), or
    /// <see cref="PublishStatus.StateTooLarge"/> when the new document exceeds <paramref name="maxDocumentBytes"/>.
    /// </summary>
    public static PublishStatus TryApply(ReadOnlySpan<byte> document, ReadOnlySpan<byte> patch, int maxDocumentBytes, out byte[] newDocument)
    {
        newDocument = [];
        if (ParseObject(patch) is not { } changes)
        {
            return PublishStatus.NotAnObject;
        }
        var target = ParseTrusted(document);
        ApplyTo(target, changes);
        return Fits(target, maxDocumentBytes, out newDocument);
    }

    /// <summary>
    /// Checks a replacement document: <see cref="PublishStatus.Published"/> with its compact text,
    /// <see cref="PublishStatus.NotAnObject"/> or <see cref="PublishStatus.StateTooLarge"/> as <see cref="TryApply"/>.
    /// </summary>
    public static PublishStatus TryReplace(ReadOnlySpan<byte> replacement, int maxDocumentBytes, out byte[] newDocument)
    {
        newDocument = [];
        return ParseObject(replacement) is { } document ? Fits(document, maxDocumentBytes, out newDocument) : PublishStatus.NotAnObject;
    }

    /// <summary>Why <paramref name="body"/> is not a patch or document (not JSON, or JSON but not an object), for a client; <see langword="null"/> when it is one.</summary>
    public static string? Describe(ReadOnlySpan<byte> body)
    {
        try
        {
            var node = JsonNode.Parse(body, documentOptions: Strict);
            return node is JsonObject ? null
                : $"The body is a JSON {Kind(node)}, not an object: a state topic's document is a JSON object, and a merge patch is one too.";
        }
        catch (JsonException exception)
        {
            return $"The body is not valid JSON ({exception.Message}): send one JSON object, without duplicate keys, nested at most 64 deep.";
        }
    }

    /// <summary>
    /// One patch that does what <paramref name="first"/> then <paramref name="second"/> do to any document (both
    /// patches this type accepted); <see langword="null"/> in the one case no patch can: <paramref name="first"/>
    /// sets a key to a non-object or deletes it and <paramref name="second"/> patches that key with an object,
    /// whose result depends on the document only the first had.
    /// </summary>
    public static byte[]? Compose(ReadOnlySpan<byte> first, ReadOnlySpan<byte> second)
    {
        var composed = ParseTrusted(first);
        return ComposeInto(composed, ParseTrusted(second)) ? Write(composed) : null;
    }

    /// <summary>Applies <paramref name="patch"/> (accepted before) to <paramref name="document"/> without a size limit: for composing what was accepted.</summary>
    public static byte[] Apply(ReadOnlySpan<byte> document, ReadOnlySpan<byte> patch)
    {
        var target = ParseTrusted(document);
        ApplyTo(target, ParseTrusted(patch));
        return Write(target);
    }

    private static JsonObject? ParseObject(ReadOnlySpan<byte> json)
    {
        try
        {
            return JsonNode.Parse(json, documentOptions: Strict) as JsonObject;
        }
        catch (JsonException)
        {
            return null;
        }
    }

    private static JsonObject ParseTrusted(ReadOnlySpan<byte> json) =>
        JsonNode.Parse(json, documentOptions: Strict) as JsonObject ?? throw new ArgumentException("Not a JSON object.", nameof(json));

    /// <summary>RFC 7396's MergePatch(Target, Patch), in place.</summary>
    private static void ApplyTo(JsonObject target, JsonObject patch)
    {
        foreach (var (key, value) in patch)
        {
            if (value is null)
            {
                target.Remove(key);
            }
            else if (value is JsonObject changes)
            {
                if (target[key] is not JsonObject inner)
                {
                    inner = [];
                    target[key] = inner;
                }
                ApplyTo(inner, changes);
            }
            else
            {
                target[key] = value.DeepClone();
            }
        }
    }

    private static bool ComposeInto(JsonObject first, JsonObject second)
    {
        foreach (var (key, value) in second)
        {
            if (value is JsonObject changes && first.TryGetPropertyValue(key, out var earlier))
            {
                if (earlier is not JsonObject inner || !ComposeInto(inner, changes))
                {
                    return false;
                }
            }
            else
            {
                first[key] = value?.DeepClone();
            }
        }
        return true;
    }

    private static PublishStatus Fits(JsonObject document, int maxDocumentBytes, out byte[] text)
    {
        text = Write(document);
        return text.Length <= maxDocumentBytes ? PublishStatus.Published : PublishStatus.StateTooLarge;
    }

    private static byte[] Write(JsonObject document)
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(buffer, Compact))
        {
            document.WriteTo(writer);
        }
        return buffer.WrittenSpan.ToArray();
    }

    private static string Kind(JsonNode? node) => node switch
    {
        null => "null",
        JsonArray => "array",
        _ => node.GetValueKind() switch
        {
            JsonValueKind.String => "string",
            JsonValueKind.Number => "number",
            _ => "boolean",
        },
    };
}
