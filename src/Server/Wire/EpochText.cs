using System.Buffers;

namespace Laharsub.Server.Wire;

/// <summary>The one rule for an epoch a client sends back, in a poll's query or a publish's <c>If-Match</c>.</summary>
internal static class EpochText
{
    /// <summary>The longest epoch a client may send.</summary>
    public const int MaxLength = 32;

    private static readonly SearchValues<char> Characters =
        SearchValues.Create("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_");

    /// <summary>Whether a client's epoch is well-formed: what servers issue is opaque, but never longer than 32 URL-safe characters.</summary>
    public static bool IsValid(ReadOnlySpan<char> text) => text.Length is > 0 and <= MaxLength && !text.ContainsAnyExcept(Characters);
}
