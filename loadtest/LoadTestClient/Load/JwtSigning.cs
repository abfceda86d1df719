using System.Globalization;
using System.Text;
using Microsoft.IdentityModel.JsonWebTokens;
using Microsoft.IdentityModel.Tokens;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// A run against Laharsub in Jwt mode (<c>--jwt-key</c>): the HS256 key, issuer and audience the server
/// checks (<c>Laharsub:Auth:Jwt:SigningKey</c>, <c>Issuer</c>, <c>Audience</c>), with which each process
/// mints one token per simulated client, as an application would give each of its users one
/// (docs/access-control.md). Each token has a subject of its own and grants only what its client does.
/// </summary>
internal sealed record JwtSigning(string Key, string Issuer, string Audience)
{
    /// <summary>The issuer when none is given: what a server this tool starts is set to check.</summary>
    public const string DefaultIssuer = "laharsub-loadtest";

    /// <summary>The audience when none is given.</summary>
    public const string DefaultAudience = "laharsub";

    /// <summary>The server refuses to start with a shorter HS256 key (LaharsubAuthOptionsValidator).</summary>
    public const int MinKeyBytes = 32;

    private static readonly JsonWebTokenHandler Handler = new();

    /// <summary>How long every token is valid beyond the run's own length: nothing expires while it runs.</summary>
    private static readonly TimeSpan Margin = TimeSpan.FromHours(1);

    /// <summary>The subject of client <paramref name="client"/>'s token; in a run with presence, the member it is.</summary>
    public static string Subject(int client) => "loadtest-" + client.ToString(CultureInfo.InvariantCulture);

    /// <summary>
    /// Client <paramref name="client"/>'s token: <c>subscribe</c> on the topics it subscribes to and, when it
    /// publishes, <c>publish</c> on its home topic; valid for the run's <paramref name="length"/> and a margin.
    /// </summary>
    public string ClientToken(int client, long? publishesTo, IEnumerable<long> subscribesTo, TimeSpan length)
    {
        var claim = new Dictionary<string, object>
        {
            ["subscribe"] = subscribesTo.Select(Id).ToList(),
        };
        if (publishesTo is { } home)
        {
            claim["publish"] = new List<string> { Id(home) };
        }
        return Issue(Subject(client), claim, length);
    }

    /// <summary>The token of this tool's own requests before and after the run: creating the topics and, with --url, deleting them.</summary>
    public string SetupToken(TimeSpan length) => Issue("loadtest-setup", new Dictionary<string, object>
    {
        ["create"] = new List<string> { "*" },
        ["delete"] = new List<string> { "*" },
    }, length);

    private string Issue(string subject, Dictionary<string, object> claim, TimeSpan length)
    {
        var now = DateTime.UtcNow;
        return Handler.CreateToken(new SecurityTokenDescriptor
        {
            Issuer = Issuer,
            Audience = Audience,
            IssuedAt = now,
            NotBefore = now,
            Expires = now + length + Margin,
            Claims = new Dictionary<string, object> { ["sub"] = subject, ["laharsub"] = claim },
            SigningCredentials = new SigningCredentials(new SymmetricSecurityKey(Encoding.UTF8.GetBytes(Key)), SecurityAlgorithms.HmacSha256),
        });
    }

    private static string Id(long topicId) => topicId.ToString(CultureInfo.InvariantCulture);
}
