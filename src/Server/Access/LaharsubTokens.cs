using Laharsub.Server.Access;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Laharsub.Server;

/// <summary>
/// Mints Jwt mode's tokens in an application that hosts Laharsub or sits beside it with the same settings: after its
/// own login, the application gives each user a short-lived token whose <c>laharsub</c> claim grants what that user may
/// do, signed with <c>Laharsub:Auth:Jwt:SigningKey</c> (HS256) and carrying the configured issuer and audience.
/// Registered by <c>AddLaharsub()</c>; docs/access-control.md, "Minting tokens in your app".
/// </summary>
public sealed class LaharsubTokens
{
    private static readonly IssueArguments Parameters = new("subject", "lifetime", operation => $"grants[{operation}]");

    private readonly IOptions<LaharsubAuthOptions> _options;
    private readonly TimeProvider _clock;

    internal LaharsubTokens(IOptions<LaharsubAuthOptions> options, TimeProvider clock)
    {
        _options = options;
        _clock = clock;
    }

    /// <summary>
    /// A token for <paramref name="subject"/> (its <c>sub</c>: the presence identity and the rate limits' key) granting
    /// each operation on the topic patterns given (<c>*</c>, an id, an id range <c>10-20</c>, or a label pattern
    /// <c>orders-*</c>), valid for <paramref name="lifetime"/> from now.
    /// </summary>
    /// <exception cref="ArgumentException">A pattern, the subject or the lifetime is invalid, or no signing key is configured; the message says what to fix.</exception>
    public string Issue(string subject, IReadOnlyDictionary<LaharsubOperation, string[]> grants, TimeSpan lifetime)
    {
        ArgumentNullException.ThrowIfNull(subject);
        ArgumentNullException.ThrowIfNull(grants);
        return TokenIssuer.Issue(_options.Value, subject,
            grants.Select(grant => KeyValuePair.Create(grant.Key, (IReadOnlyList<string>)grant.Value)), lifetime, _clock.GetUtcNow(), Parameters);
    }
}
