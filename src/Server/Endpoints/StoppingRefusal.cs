using Laharsub.Server.Transport;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Laharsub.Server.Endpoints;

/// <summary>
/// A server instance that is stopping changes nothing: creating, deleting and publishing are answered
/// <c>503</c> with <c>Retry-After</c> and <c>Connection: close</c>. The polls waiting here were answered
/// when shutdown began, so a change accepted now might reach nobody before this process (and, in memory,
/// the change itself) is gone; refused, the client makes it again, through its load balancer, at an
/// instance that stays. Reads and polls are still served.
/// </summary>
internal static class StoppingRefusal
{
    /// <summary>Refuses every endpoint of <paramref name="changes"/> while the application is stopping.</summary>
    public static RouteGroupBuilder RefuseWhileStopping(this RouteGroupBuilder changes) =>
        changes.AddEndpointFilterFactory((factory, next) =>
        {
            var stopping = factory.ApplicationServices.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping;
            return invocation => stopping.IsCancellationRequested
                ? ValueTask.FromResult<object?>(Refuse(invocation.HttpContext))
                : next(invocation);
        });

    /// <summary>
    /// The refusal when <paramref name="stopping"/> is cancelled, else <see langword="null"/>: for a handler
    /// that reads its own body, during which shutdown may begin after the filter let the request in.
    /// </summary>
    public static ProblemHttpResult? IfStopping(HttpContext context, CancellationToken stopping) =>
        stopping.IsCancellationRequested ? Refuse(context) : null;

    private static ProblemHttpResult Refuse(HttpContext context)
    {
        context.Response.Headers.RetryAfter = "1";
        context.Response.Headers.Connection = "close";
        return Problems.Status(StatusCodes.Status503ServiceUnavailable, "Shutting down",
            $"This server instance is shutting down: nothing was changed by {context.Request.Method} {context.Request.Path}. "
            + "Send it again in a moment; a new connection reaches an instance that stays.");
    }
}
