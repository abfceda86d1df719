using System.Buffers;
using System.Globalization;
using System.Security.Cryptography;
using System.Text;
using System.Text.Unicode;
using Laharsub.Server.Storage;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Transport;

/// <summary>
/// The <c>Idempotency-Key</c> request header of draft-ietf-httpapi-idempotency-key-header: a structured-field
/// string (<c>"8e03978e-40d5-43e8-bc93-6894a57f9324"</c>), which this server also takes bare, as clients
/// that do not quote it send it; and the fingerprint that tells a retry from another request with the same key.
/// </summary>
internal static class IdempotencyKeyHeader
{
    public const string Name = "Idempotency-Key";

    /// <summary>The longest key: room for any UUID or ULID with a prefix, and a bound on what each key costs.</summary>
    public const int MaxLength = 255;

    /// <summary>Reads the header; true with a null key when it is absent, false with the reason when it is malformed.</summary>
    public static bool TryParse(HttpRequest request, out string? key, out string error)
    {
        key = null;
        error = "";
        var values = request.Headers[Name];
        if (values.Count == 0)
        {
            return true;
        }
        if (values.Count > 1)
        {
            error = "Send one Idempotency-Key, not several.";
            return false;
        }
        return TryParse(values[0] ?? "", out key, out error);
    }

    /// <summary>Reads one header value: the key in quotes, or bare; false with the reason when it is malformed.</summary>
    public static bool TryParse(string value, out string? key, out string error)
    {
        key = null;
        var text = value.Length >= 2 && value[0] == '"' && value[^1] == '"' ? value[1..^1] : value;
        if (!IsValid(text, out error))
        {
            return false;
        }
        key = text;
        return true;
    }

    /// <summary>
    /// Whether <paramref name="key"/> (unquoted) is a key this server takes, from the header or from a WebSocket
    /// publish frame's <c>idempotencyKey</c>: 1 to <see cref="MaxLength"/> printable ASCII characters.
    /// </summary>
    public static bool IsValid(string key, out string error)
    {
        error = "";
        if (key.Length is 0 or > MaxLength)
        {
            error = $"The key is {key.Length} characters: send 1 to {MaxLength} (a UUID is 36), as Idempotency-Key: \"<key>\" (a WebSocket publish frame: \"idempotencyKey\":\"<key>\").";
            return false;
        }
        foreach (var c in key)
        {
            // Printable ASCII without the quote and backslash a structured-field string escapes: no escaping to undo.
            if (c is < ' ' or > '~' or '"' or '\\')
            {
                error = "The key holds a character other than printable ASCII (or a quote or backslash): use letters, digits and - such as a UUID.";
                return false;
            }
        }
        return true;
    }

    /// <summary>
    /// What identifies the request a key came with: a SHA-256 of its targets (with their epochs), its content
    /// type and its body, so that a key reused for another message, topic or content type is told apart.
    /// </summary>
    public static IdempotencyKey Fingerprinted(string key, ReadOnlySpan<PublishTarget> targets, string contentType, ReadOnlySpan<byte> body)
    {
        // One contiguous input and a one-shot hash: no hash object, builder or intermediate strings per publish.
        var capacity = body.Length + 2 + Encoding.UTF8.GetMaxByteCount(contentType.Length);
        foreach (var target in targets)
        {
            capacity += 22 + Encoding.UTF8.GetMaxByteCount(target.IfEpoch?.Length ?? 0);
        }
        var rented = ArrayPool<byte>.Shared.Rent(capacity);
        try
        {
            var written = 0;
            foreach (var target in targets)
            {
                Utf8.TryWrite(rented.AsSpan(written), CultureInfo.InvariantCulture, $"{target.TopicId}~{target.IfEpoch},", out var length);
                written += length;
            }
            Utf8.TryWrite(rented.AsSpan(written), CultureInfo.InvariantCulture, $"\n{contentType}\n", out var tail);
            written += tail;
            body.CopyTo(rented.AsSpan(written));
            written += body.Length;
            Span<byte> digest = stackalloc byte[SHA256.HashSizeInBytes];
            SHA256.HashData(rented.AsSpan(0, written), digest);
            return new IdempotencyKey(key, Convert.ToHexStringLower(digest));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }
}
