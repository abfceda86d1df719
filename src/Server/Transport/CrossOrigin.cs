using System.Text;
using Microsoft.AspNetCore.Cors.Infrastructure;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Transport;

/// <summary>What Laharsub's CORS policy lets a page read of a cross-origin answer (docs/access-control.md).</summary>
internal static class CrossOrigin
{
    /// <summary>The name of Laharsub's CORS policy, which its endpoints require.</summary>
    public const string PolicyName = "Laharsub";

    /// <summary>The response headers a page's script may read besides the safelisted ones.</summary>
    public static readonly string[] ExposedHeaders = ["Location", "Retry-After", "WWW-Authenticate"];

    /// <summary>
    /// The header lines (each after a line break, as <c>"\r\nName: value"</c>) that ASP.NET Core's CORS service adds under
    /// <paramref name="policy"/> to the answer to a simple request from a page, for a front-end that writes its answers
    /// itself; meaningful where the policy allows any origin, so that the lines are the same for every page.
    /// </summary>
    public static byte[] AnswerHeaderLines(ICorsService cors, CorsPolicy policy)
    {
        var context = new DefaultHttpContext();
        context.Request.Method = HttpMethods.Get;
        context.Request.Headers.Origin = "https://page.example";
        cors.ApplyResult(cors.EvaluatePolicy(context, policy), context.Response);
        var lines = new StringBuilder();
        foreach (var (name, value) in context.Response.Headers)
        {
            lines.Append("\r\n").Append(name).Append(": ").Append(value.ToString());
        }
        return Encoding.ASCII.GetBytes(lines.ToString());
    }
}
