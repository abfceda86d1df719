using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using System.Text.Unicode;

namespace Laharsub.Server.Wire;

/// <summary>
/// The text clients send, read so that text that is not Unicode is bad input where it arrives rather than a
/// failure where it goes out again. <see cref="Utf8JsonReader"/> and <see cref="JsonDocument"/> accept a
/// string whose raw bytes are not UTF-8 or whose <c>\u</c> escapes leave half a surrogate pair
/// (<c>"\ud800"</c>); only reading it as text throws (<see cref="InvalidOperationException"/>), or writing it
/// out. Every string and property name of the JSON a client sends (bodies, <c>member</c> data, WebSocket
/// frames) is read through here; so are the query values kept as text.
/// </summary>
internal static class UnicodeText
{
    /// <summary>What Unicode text is in JSON, for a problem's message.</summary>
    public const string Rule = "JSON text must be UTF-8, with a \\u escape of a surrogate only as a pair (\\uD83D\\uDE00: high, then low).";

    /// <summary>What a query value's escapes must be, for a problem's message.</summary>
    public const string QueryRule = "Percent-escapes stand for the bytes of UTF-8 text (%C3%A9 is \u00e9).";

    /// <summary>The current string or property name as text; false when it is not Unicode text.</summary>
    public static bool TryGetString(ref Utf8JsonReader reader, [NotNullWhen(true)] out string? text)
    {
        try
        {
            text = reader.GetString()!;
            return true;
        }
        catch (InvalidOperationException)
        {
            // The token is a string or a name: GetString refuses only bytes that are not UTF-8 and lone surrogates.
            text = null;
            return false;
        }
    }

    /// <summary>Whether the current string or property name is Unicode text; makes no string of it unless it has escapes.</summary>
    public static bool IsValid(ref Utf8JsonReader reader)
    {
        if (!reader.ValueIsEscaped)
        {
            return reader.HasValueSequence ? Utf8.IsValid(reader.ValueSequence.ToArray()) : Utf8.IsValid(reader.ValueSpan);
        }
        return TryGetString(ref reader, out _);
    }

    /// <summary>
    /// Reads the value the reader is on to its end (an object or array whole); false when a string or property
    /// name in it is not Unicode text. Throws <see cref="JsonException"/> where the value is not JSON.
    /// </summary>
    public static bool ReadValue(ref Utf8JsonReader reader)
    {
        var depth = reader.CurrentDepth;
        while (true)
        {
            if (reader.TokenType is JsonTokenType.String or JsonTokenType.PropertyName && !IsValid(ref reader))
            {
                return false;
            }
            if (reader.CurrentDepth == depth && reader.TokenType is not (JsonTokenType.StartObject or JsonTokenType.StartArray))
            {
                return true;
            }
            if (!reader.Read())
            {
                throw new JsonException("The JSON value ends before it is complete.");
            }
        }
    }

    /// <summary>
    /// Whether <paramref name="text"/> is Unicode, as UTF-8 in <paramref name="utf8"/> (which has room for
    /// <see cref="System.Text.Encoding.UTF8"/>'s count of its bytes); false for a lone surrogate, which
    /// <see cref="System.Text.Encoding.UTF8"/> would silently replace.
    /// </summary>
    public static bool TryEncode(ReadOnlySpan<char> text, Span<byte> utf8, out int written) =>
        Utf8.FromUtf16(text, utf8, out _, out written, replaceInvalidSequences: false) == OperationStatus.Done;

    /// <summary>
    /// Whether the percent-escapes of a raw query value stand for UTF-8. The query's decoder (as
    /// <c>HttpRequest.Query</c> has it) keeps escapes that do not as they are: <c>%FF</c> would be read as
    /// the three characters, text the client did not send.
    /// </summary>
    public static bool HasUtf8Escapes(ReadOnlySpan<char> encoded)
    {
        // Only a run of escapes can make a character of several bytes: each run is decoded and checked whole.
        Span<byte> small = stackalloc byte[256];
        for (var at = encoded.IndexOf('%'); at >= 0; at = encoded.IndexOf('%'))
        {
            encoded = encoded[at..];
            var escapes = 0;
            while (IsEscape(encoded, escapes * 3))
            {
                escapes++;
            }
            var run = escapes <= small.Length ? small[..escapes] : new byte[escapes];
            for (var i = 0; i < escapes; i++)
            {
                run[i] = (byte)(HexValue(encoded[(i * 3) + 1]) << 4 | HexValue(encoded[(i * 3) + 2]));
            }
            if (!Utf8.IsValid(run))
            {
                return false;
            }
            encoded = encoded[Math.Max(1, escapes * 3)..];
        }
        return true;
    }

    private static bool IsEscape(ReadOnlySpan<char> text, int at) =>
        at + 2 < text.Length && text[at] == '%' && char.IsAsciiHexDigit(text[at + 1]) && char.IsAsciiHexDigit(text[at + 2]);

    private static int HexValue(char digit) => digit <= '9' ? digit - '0' : (digit | 0x20) - 'a' + 10;
}
