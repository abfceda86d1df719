using System.Globalization;

namespace Laharsub.Server.Wire;

/// <summary>
/// Parses the integers of paths and query strings: ASCII digits only, nothing before or after.
/// <c>NumberStyles.None</c> alone is not enough: .NET's number parser also accepts trailing NUL
/// characters (a leftover of parsing C strings), so <c>?timeout=0%00</c> would read as 0.
/// </summary>
internal static class PlainInteger
{
    public static bool TryParse(ReadOnlySpan<char> text, out long value)
    {
        value = 0;
        return IsDigits(text) && long.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value);
    }

    public static bool TryParse(ReadOnlySpan<char> text, out int value)
    {
        value = 0;
        return IsDigits(text) && int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value);
    }

    /// <summary>Parses an id from a path or query (a topic's, a message's): a positive 64-bit integer in plain digits.</summary>
    public static bool TryParseId(ReadOnlySpan<char> text, out long id) => TryParse(text, out id) && id > 0;

    /// <inheritdoc cref="TryParseId(ReadOnlySpan{char}, out long)"/>
    public static bool TryParseId(string? text, out long id) => TryParseId(text.AsSpan(), out id);

    private static bool IsDigits(ReadOnlySpan<char> text) => !text.IsEmpty && !text.ContainsAnyExceptInRange('0', '9');

    /// <summary>What a problem says of <paramref name="text"/> that is not an id of <paramref name="what"/> (a topic id, a message id).</summary>
    public static string NotAnId(string? text, string what) =>
        $"'{text}' is not a {what}: use a positive integer no greater than {long.MaxValue}.";
}
