using System.Text.Json;

namespace Laharsub.Client;

/// <summary>One member present on a topic, as the member list reports it.</summary>
/// <param name="Member">Its identity: the client id it chose (Open mode) or its token's subject (Jwt mode).</param>
/// <param name="Data">The JSON object it sent as member data (<see cref="LaharsubSubscription.MemberData"/>), or <see langword="null"/> when it sent none.</param>
public sealed record PresenceMember(string Member, JsonElement? Data);
