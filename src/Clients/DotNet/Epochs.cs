using System.Buffers;
using System.Runtime.CompilerServices;

namespace Laharsub.Client;

/// <summary>The protocol's rule for epochs: opaque tokens of 1 to 32 characters from [0-9A-Za-z_-].</summary>
internal static class Epochs
{
    public const int MaxLength = 32;

    private static readonly SearchValues<char> Allowed = SearchValues.Create("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-");
    private static readonly SearchValues<byte> AllowedBytes = SearchValues.Create("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"u8);

    public static bool IsValid(ReadOnlySpan<char> epoch) =>
        epoch.Length is > 0 and <= MaxLength && !epoch.ContainsAnyExcept(Allowed);

    public static bool IsValid(ReadOnlySpan<byte> epoch) =>
        epoch.Length is > 0 and <= MaxLength && !epoch.ContainsAnyExcept(AllowedBytes);

    /// <summary>Throws <see cref="ArgumentException"/> unless <paramref name="epoch"/> is <see langword="null"/> or a valid epoch.</summary>
    public static void ThrowIfInvalid(string? epoch, [CallerArgumentExpression(nameof(epoch))] string? parameterName = null)
    {
        if (epoch is not null && !IsValid(epoch))
        {
            throw new ArgumentException(
                $"'{epoch}' is not an epoch: use the token the server reported (TopicInfo.Epoch, a message's Epoch, or a saved TopicCursor), 1 to {MaxLength} characters of 0-9, A-Z, a-z, '_' and '-'; or null when it is not known.",
                parameterName);
        }
    }

    /// <summary>An epoch the server sent, refused unless valid: it goes into poll URLs, where anything else would break the query.</summary>
    /// <exception cref="InvalidDataException">The server sent something that is not an epoch.</exception>
    public static string? Received(string? epoch) =>
        epoch is null || IsValid(epoch) ? epoch
        : throw new InvalidDataException($"The server sent '{epoch}' as an epoch, which is not 1 to {MaxLength} characters of 0-9, A-Z, a-z, '_' and '-'.");

    public static void Checked(CreatedTopic created) => Received(created.Epoch);

    public static void Checked(TopicInfo topic) => Received(topic.Epoch);

    public static void Checked(PublishedMessage published) => Received(published.Epoch);
}
