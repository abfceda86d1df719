using Microsoft.IdentityModel.Tokens;

namespace Laharsub.Server.Access;

/// <summary>A validly signed token whose <c>laharsub</c> claim cannot be read; the message says what is wrong with it.</summary>
internal sealed class LaharsubClaimException(string message) : SecurityTokenValidationException(message);
