using System.Globalization;
using System.Net;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Limits;

/// <summary>The answer to a client over one of its caps: <c>429</c>, <c>Retry-After</c>, and a problem detail naming the setting.</summary>
internal sealed class ClientLimitProblem(string setting, int limit, IPAddress client, string held, string advice, bool closeConnection) : IResult
{
    /// <summary>
    /// A cap frees up when one of the client's own requests ends, which the server cannot predict; a few
    /// seconds spread a NAT-ed office's retries without leaving its users waiting long.
    /// </summary>
    public static readonly TimeSpan RetryAfter = TimeSpan.FromSeconds(5);

    public async Task ExecuteAsync(HttpContext httpContext)
    {
        var response = httpContext.Response;
        response.StatusCode = StatusCodes.Status429TooManyRequests;
        response.Headers.RetryAfter = ((int)RetryAfter.TotalSeconds).ToString(CultureInfo.InvariantCulture);
        if (closeConnection)
        {
            // Connection: close for HTTP/1.x, GOAWAY for HTTP/2: the slot is given back once this answer is sent.
            httpContext.Features.Get<IConnectionLifetimeNotificationFeature>()?.RequestClose();
        }
        // A problem result, not the problem details service alone: that refuses (throws) when Accept names
        // only what no writer writes, as a browser's EventSource sends text/event-stream alone.
        await TypedResults.Problem(new ProblemDetails
        {
            Status = StatusCodes.Status429TooManyRequests,
            Title = "Too many at once from this client",
            Detail = $"Client {ClientAddress.Describe(client)} already holds {limit} {held}, the most one client address may hold " +
                $"({setting}). {advice} Retry after {(int)RetryAfter.TotalSeconds} s, or ask the operator to raise {setting}.",
            Extensions = { ["setting"] = setting, ["limit"] = limit },
        }).ExecuteAsync(httpContext).ConfigureAwait(false);
    }
}
