using Laharsub.Server.Storage;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Wire;

/// <summary>
/// The content type a publisher gives a message (REST's <c>Content-Type</c>, a WebSocket publish frame's
/// <c>contentType</c>): one rule for every publish path, so that each refuses the same types with the same words.
/// </summary>
internal static class MessageContentType
{
    /// <summary>The longest content type a message may have.</summary>
    public const int MaxLength = 256;

    /// <summary>What a message without a content type is.</summary>
    public const string Default = "application/octet-stream";

    private const string Examples = "such as application/json, text/plain; charset=utf-8 or application/octet-stream";

    private static string? s_lastValid;

    /// <summary>
    /// Why <paramref name="contentType"/> cannot be a message's content type, or <see langword="null"/> when
    /// it can: a media type of at most <see cref="MaxLength"/> characters that the stores accept
    /// (<see cref="Message.IsValidContentType"/>), and not a wildcard. A wildcard (<c>*/*</c>, <c>text/*</c>)
    /// is a media range, which only <c>Accept</c> may carry; generators send <c>*/*</c> when an API declares
    /// its body so, and subscribers could not tell what such a message is. Checked before the body is read
    /// so that a body is not read (up to MaxMessageBytes) only to be refused. The last type found valid is
    /// remembered: a publisher sends the same one again, and parsing it allocates.
    /// </summary>
    public static string? Validate(string? contentType)
    {
        if (contentType is null)
        {
            return $"The message has no content type: send the body's media type, {Examples}.";
        }
        if (string.Equals(contentType, Volatile.Read(ref s_lastValid), StringComparison.Ordinal))
        {
            return null;
        }
        if (contentType.Length > MaxLength || !Message.IsValidContentType(contentType)
            || !MediaTypeHeaderValue.TryParse(contentType, out var parsed))
        {
            return $"'{Shorten(contentType)}' is not a media type {Examples} (at most {MaxLength} characters, no control characters).";
        }
        if (parsed.MatchesAllTypes || parsed.MatchesAllSubTypes || parsed.MatchesAllSubTypesWithoutSuffix || parsed.Type.Equals("*", StringComparison.Ordinal))
        {
            return $"'{Shorten(contentType)}' is a wildcard, which says nothing of what the message is: send the body's own media type, {Examples} (any concrete type is kept as sent).";
        }
        Volatile.Write(ref s_lastValid, contentType);
        return null;
    }

    private static string Shorten(string text) => text.Length <= 100 ? text : string.Concat(text.AsSpan(0, 100), "…");
}
