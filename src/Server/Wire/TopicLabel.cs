namespace Laharsub.Server.Wire;

/// <summary>
/// Labels: the optional human names given to topics at creation (<c>POST /ps/topics {"label":"orders-eu"}</c>),
/// searched with <c>GET /ps/topics?label=orders-*</c> and matched by access patterns. A label is not
/// unique: many topics may carry the same one.
/// </summary>
internal static class TopicLabel
{
    public const int MaxLength = 100;

    public const string Rule = "A label is 1 to 100 characters: it starts with a letter, then letters, digits and - _ . : /.";

    /// <summary>Why <paramref name="label"/> is not a label, or <see langword="null"/> when it is one.</summary>
    /// <remarks>A label starts with a letter so that it never reads as a topic id or an id range in an access pattern.</remarks>
    public static string? Validate(string label)
    {
        if (label.Length is 0 or > MaxLength || !char.IsAsciiLetter(label[0]))
        {
            return $"'{Shorten(label)}' is not a label. {Rule}";
        }
        foreach (var c in label)
        {
            if (!IsLabelChar(c))
            {
                return $"'{Shorten(label)}' is not a label: '{c}' is not allowed. {Rule}";
            }
        }
        return null;
    }

    /// <summary>Why <paramref name="pattern"/> is not a label pattern (label characters and <c>*</c> for any run of them), or <see langword="null"/>.</summary>
    public static string? ValidatePattern(string pattern)
    {
        if (pattern.Length is 0 or > MaxLength)
        {
            return $"'{Shorten(pattern)}' is not a label pattern: use 1 to {MaxLength} label characters, with * standing for any run of them (orders-*).";
        }
        foreach (var c in pattern)
        {
            if (c != '*' && !IsLabelChar(c))
            {
                return $"'{Shorten(pattern)}' is not a label pattern: '{c}' is not allowed. Use letters, digits and - _ . : /, with * standing for any run of them (orders-*).";
            }
        }
        return null;
    }

    /// <summary>Whether <paramref name="label"/> matches <paramref name="pattern"/>, where <c>*</c> matches any run of characters (case-sensitive).</summary>
    public static bool Matches(ReadOnlySpan<char> pattern, ReadOnlySpan<char> label)
    {
        // Greedy glob with one backtracking point (the last star): linear for the usual prefix-star
        // patterns, and bounded by MaxLength squared otherwise.
        int p = 0, l = 0, star = -1, starLabel = 0;
        while (l < label.Length)
        {
            if (p < pattern.Length && pattern[p] == '*')
            {
                star = p++;
                starLabel = l;
            }
            else if (p < pattern.Length && pattern[p] == label[l])
            {
                p++;
                l++;
            }
            else if (star >= 0)
            {
                p = star + 1;
                l = ++starLabel;
            }
            else
            {
                return false;
            }
        }
        while (p < pattern.Length && pattern[p] == '*')
        {
            p++;
        }
        return p == pattern.Length;
    }

    private static bool IsLabelChar(char c) => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.' or ':' or '/';

    private static string Shorten(string text) => text.Length > 40 ? text[..40] + "..." : text;
}
