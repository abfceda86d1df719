using System.Buffers;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Wire;

namespace Laharsub.Server.Transport;

/// <summary>The syntax of a subscription's presence parameters, <c>client</c> and <c>member</c> (docs/protocol.md, "Identity").</summary>
internal static class PresenceParameters
{
    public const int MaxClientLength = 64;

    private const string InvalidText = "member holds text that is not Unicode: " + UnicodeText.Rule + " Send it URL-encoded as UTF-8.";

    private static readonly SearchValues<char> ClientCharacters =
        SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:@-");

    /// <summary>Why <paramref name="client"/> or <paramref name="member"/> is refused, naming which; null when both are fine (either may be absent).</summary>
    /// <param name="client">The identity; null in Jwt mode, where the token's subject is, or without one.</param>
    /// <param name="member">The data; allowed only with an identity.</param>
    /// <param name="maxDataBytes">The configured most UTF-8 bytes of the data.</param>
    /// <param name="identified">Whether the request has an identity besides <paramref name="client"/> (a token's subject).</param>
    public static (string Parameter, string Message)? Validate(string? client, string? member, int maxDataBytes, bool identified = false)
    {
        if (client is not null && ValidateClient(client) is { } clientError)
        {
            return (SubscriptionQuery.ClientParameter, clientError);
        }
        if (member is null)
        {
            return null;
        }
        if (client is null && !identified)
        {
            return (SubscriptionQuery.MemberParameter, "member is per-member data for presence, and needs an identity: add client=<id> (Open mode) or a token with a subject (Jwt mode).");
        }
        var bytes = Encoding.UTF8.GetByteCount(member);
        if (bytes > maxDataBytes)
        {
            return (SubscriptionQuery.MemberParameter, $"member is {bytes} bytes of UTF-8; at most {maxDataBytes} are allowed (Laharsub:Presence:MaxMemberDataBytes).");
        }
        var utf8 = new byte[bytes];
        if (!UnicodeText.TryEncode(member, utf8, out _))
        {
            return (SubscriptionQuery.MemberParameter, InvalidText);
        }
        try
        {
            var reader = new Utf8JsonReader(utf8);
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                return (SubscriptionQuery.MemberParameter, "member must be a JSON object, such as {\"name\":\"Alice\"} (URL-encoded).");
            }
            // Its text is checked here, where it arrives: it goes out in presence events and member lists, which cannot carry text that is not Unicode.
            if (!UnicodeText.ReadValue(ref reader))
            {
                return (SubscriptionQuery.MemberParameter, InvalidText);
            }
            // A value after the object is refused by the reader.
            reader.Read();
        }
        catch (JsonException exception)
        {
            return (SubscriptionQuery.MemberParameter, $"member is not valid JSON ({exception.Message}); send a JSON object such as {{\"name\":\"Alice\"}}, URL-encoded.");
        }
        return null;
    }

    private static string? ValidateClient(string client) =>
        client.Length is 0 or > MaxClientLength || client.AsSpan().ContainsAnyExcept(ClientCharacters)
            ? $"'{Shorten(client)}' is not a client id: use 1 to {MaxClientLength} characters of A-Z, a-z, 0-9 and _ . : @ -."
            : null;

    private static string Shorten(string text) => text.Length <= MaxClientLength + 8 ? text : text[..(MaxClientLength + 8)] + "...";
}
