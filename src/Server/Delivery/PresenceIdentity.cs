namespace Laharsub.Server.Delivery;

/// <summary>
/// Who a subscription is for presence: the token's subject in Jwt mode, or the <c>client</c> parameter in
/// Open mode, with its <c>member</c> data. A subscription without one is an anonymous observer.
/// </summary>
/// <param name="Member">The member's identity.</param>
/// <param name="Data">Its data: a JSON object's text, already validated and size-checked, or null.</param>
internal sealed record PresenceIdentity(string Member, string? Data);
