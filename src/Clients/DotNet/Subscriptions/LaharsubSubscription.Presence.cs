using System.Buffers;
using System.Text;
using System.Text.Json;

namespace Laharsub.Client;

public sealed partial class LaharsubSubscription
{
    /// <summary>The longest client id the server accepts.</summary>
    private const int MaxClientIdLength = 64;

    /// <summary>The most member data any server accepts (its <c>Presence:MaxMemberDataBytes</c> is at most this; the default is 256).</summary>
    private const int MaxMemberDataBytes = 4096;

    private static readonly SearchValues<char> ClientIdCharacters =
        SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:@-");

    private string? _clientId;
    private string? _memberData;

    /// <summary>
    /// The identity this subscription is present with on the topics with presence that it polls or
    /// streams (Open mode; sent as <c>client</c>): 1 to 64 characters of <c>A-Z a-z 0-9 _ . : @ -</c>.
    /// It is unauthenticated: anyone may claim any id. In Jwt mode leave it <see langword="null"/>: the
    /// token's subject is the identity and the server refuses <c>client</c>. <see langword="null"/> (the default)
    /// with no token is an anonymous observer, present nowhere. Takes effect from the next poll or connection.
    /// </summary>
    /// <exception cref="ArgumentException">Empty, longer than 64 characters, or another character.</exception>
    public string? ClientId
    {
        get
        {
            lock (_gate)
            {
                return _clientId;
            }
        }
        set
        {
            if (value is not null && !IsClientId(value))
            {
                throw new ArgumentException($"A client id is 1 to {MaxClientIdLength} characters of A-Z a-z 0-9 _ . : @ -; got '{value}'.", nameof(value));
            }
            lock (_gate)
            {
                _clientId = value;
            }
        }
    }

    /// <summary>
    /// Data shown with this subscriber in the member list and its presence events (sent as <c>member</c>):
    /// the text of a JSON object, e.g. <c>{"name":"Alice"}</c>, at most the server's
    /// <c>Presence:MaxMemberDataBytes</c> (256 bytes of UTF-8 by default; a larger one ends
    /// <see cref="ReadAllAsync"/> with a <c>400</c> naming <c>member</c>). Needs an identity:
    /// <see cref="ClientId"/> or a token. Takes effect from the next poll or connection; a change of
    /// data alone makes no event.
    /// </summary>
    /// <exception cref="ArgumentException">Not a JSON object, or above 4096 bytes (more than any server accepts).</exception>
    public string? MemberData
    {
        get
        {
            lock (_gate)
            {
                return _memberData;
            }
        }
        set
        {
            if (value is not null)
            {
                ThrowIfNotMemberData(value);
            }
            lock (_gate)
            {
                _memberData = value;
            }
        }
    }

    /// <summary>The presence parameters of a connection's query, empty without them.</summary>
    private string PresenceQuery()
    {
        var query = _clientId is null ? "" : "&client=" + _clientId;
        return _memberData is null ? query : query + "&member=" + Uri.EscapeDataString(_memberData);
    }

    private static bool IsClientId(string value) =>
        value.Length is > 0 and <= MaxClientIdLength
        && !value.AsSpan().ContainsAnyExcept(ClientIdCharacters);

    private static void ThrowIfNotMemberData(string value)
    {
        if (Encoding.UTF8.GetByteCount(value) > MaxMemberDataBytes)
        {
            throw new ArgumentException($"Member data is at most {MaxMemberDataBytes} bytes of UTF-8 (the server's Presence:MaxMemberDataBytes may allow less).", nameof(value));
        }
        try
        {
            using var document = JsonDocument.Parse(value);
            if (document.RootElement.ValueKind == JsonValueKind.Object)
            {
                return;
            }
        }
        catch (JsonException)
        {
            // Reported below, with the same message as any other non-object.
        }
        throw new ArgumentException("Member data is the text of a JSON object, e.g. {\"name\":\"Alice\"}.", nameof(value));
    }
}
