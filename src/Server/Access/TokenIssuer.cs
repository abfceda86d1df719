using System.Globalization;
using System.Text;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

namespace Laharsub.Server.Access;

/// <summary>
/// Issues HS256 tokens signed with <c>Laharsub:Auth:Jwt:SigningKey</c>: what the token command prints
/// (<c>dotnet run --project src/Server/Host -- token --publish '*' --subscribe '*' --ttl 1h</c>) and what an
/// application mints for its users with <see cref="LaharsubTokens"/>.
/// </summary>
internal static class TokenIssuer
{
    public static readonly TimeSpan MaxTimeToLive = TimeSpan.FromDays(366);

    /// <summary>How the token command names what it is given, in its errors.</summary>
    public static readonly IssueArguments CommandLine = new("--subject", "--ttl", operation => "--" + operation.Name());

    /// <summary>
    /// Issues a token granting <paramref name="grants"/> (operation → patterns); throws <see cref="ArgumentException"/>
    /// saying what to fix, naming what was given as <paramref name="names"/> says (the command's options, or an API's parameters).
    /// </summary>
    public static string Issue(LaharsubAuthOptions options, string subject, IEnumerable<KeyValuePair<LaharsubOperation, IReadOnlyList<string>>> grants,
        TimeSpan timeToLive, DateTimeOffset now, IssueArguments names)
    {
        var jwt = options.Jwt;
        if (string.IsNullOrEmpty(jwt.SigningKey))
        {
            throw new ArgumentException("The token tool signs with Laharsub:Auth:Jwt:SigningKey, which is not set. Set it (at least 32 bytes of random text, e.g. 'openssl rand -base64 32') " +
                "in appsettings.json, as the environment variable Laharsub__Auth__Jwt__SigningKey, or as --Laharsub:Auth:Jwt:SigningKey=...; the server must use the same key.");
        }
        var validation = new LaharsubAuthOptionsValidator().Validate(null, options);
        if (validation.Failed)
        {
            throw new ArgumentException(validation.FailureMessage);
        }
        if (timeToLive <= TimeSpan.Zero || timeToLive > MaxTimeToLive)
        {
            throw new ArgumentException($"{names.TimeToLive} is {timeToLive}: use a positive time of at most {MaxTimeToLive.TotalDays} days, e.g. 1h, 30m or 7d.");
        }
        if (string.IsNullOrWhiteSpace(subject))
        {
            throw new ArgumentException($"{names.Subject} is empty: name who the token is for (rate limits and presence are counted per subject).");
        }
        var claim = new Dictionary<string, object>();
        foreach (var (operation, patterns) in grants)
        {
            foreach (var pattern in patterns)
            {
                if (!TopicPattern.TryParse(pattern, out var parsed, out var error))
                {
                    throw new ArgumentException($"{names.Operation(operation)} {pattern}: {error}");
                }
                if (operation == LaharsubOperation.Create && !parsed.IsAll && parsed.Label is null)
                {
                    throw new ArgumentException($"{names.Operation(operation)} {pattern}: creation is granted by label pattern (orders-*) or * only, since a topic's id is assigned when it is created.");
                }
                if (operation == LaharsubOperation.Admin && !parsed.IsAll)
                {
                    throw new ArgumentException($"{names.Operation(operation)} {pattern}: admin is no topic permission, so it is granted with * only.");
                }
            }
            if (patterns.Count > 0)
            {
                claim[operation.Name()] = claim.TryGetValue(operation.Name(), out var earlier) ? [.. (List<string>)earlier, .. patterns] : patterns.ToList();
            }
        }
        var descriptor = new SecurityTokenDescriptor
        {
            Issuer = jwt.Issuer,
            Audience = jwt.Audience,
            IssuedAt = now.UtcDateTime,
            NotBefore = now.UtcDateTime,
            Expires = (now + timeToLive).UtcDateTime,
            Claims = new Dictionary<string, object> { ["sub"] = subject, [LaharsubPermissions.ClaimType] = claim },
            SigningCredentials = new SigningCredentials(new SymmetricSecurityKey(Encoding.UTF8.GetBytes(jwt.SigningKey)), SecurityAlgorithms.HmacSha256),
        };
        return new JsonWebTokenHandler().CreateToken(descriptor);
    }

    /// <summary>Parses a lifetime: <c>90s</c>, <c>30m</c>, <c>1h</c>, <c>7d</c>, or a TimeSpan such as <c>01:30:00</c>.</summary>
    public static bool TryParseTimeToLive(string text, out TimeSpan timeToLive)
    {
        timeToLive = default;
        if (text.Length >= 2 && char.IsAsciiLetter(text[^1])
            && double.TryParse(text.AsSpan(0, text.Length - 1), NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var amount))
        {
            TimeSpan? parsed = char.ToLowerInvariant(text[^1]) switch
            {
                's' => TimeSpan.FromSeconds(amount),
                'm' => TimeSpan.FromMinutes(amount),
                'h' => TimeSpan.FromHours(amount),
                'd' => TimeSpan.FromDays(amount),
                _ => null,
            };
            timeToLive = parsed ?? default;
            return parsed is not null;
        }
        return TimeSpan.TryParse(text, CultureInfo.InvariantCulture, out timeToLive);
    }
}

/// <summary>The names of what a token's issuer was given, for its errors: <c>--ttl</c> on the command line, <c>lifetime</c> in C#.</summary>
internal sealed record IssueArguments(string Subject, string TimeToLive, Func<LaharsubOperation, string> Operation);
