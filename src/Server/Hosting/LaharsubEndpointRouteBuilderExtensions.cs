using Laharsub.Server.Access;
using Laharsub.Server.Endpoints;
using Laharsub.Server.FastPath;
using Laharsub.Server.Hosting;
using Laharsub.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Cors.Infrastructure;
using Microsoft.AspNetCore.Http.Metadata;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Microsoft.AspNetCore.Builder;

/// <summary>Maps Laharsub's endpoints into an ASP.NET Core application.</summary>
public static class LaharsubEndpointRouteBuilderExtensions
{
    /// <summary>
    /// Maps the topic and subscription endpoints under <paramref name="prefix"/> (default <c>/ps</c>).
    /// The host should also call <c>UseWebSockets()</c> (without it the subscription URL serves long polls and
    /// Server-Sent Events only; with it, WebSockets over HTTP/1.1 and, as extended CONNECTs, over HTTP/2),
    /// <c>UseCors()</c> (cross-origin pages; on a <c>WebApplication</c> that does not, Laharsub's endpoints get
    /// it from here), <c>UseRateLimiter()</c> (without
    /// it <c>Laharsub:RateLimit</c> has no effect, and the first limited request logs a warning saying so), and <c>UseExceptionHandler()</c> with
    /// <c>UseStatusCodePages()</c> so that every error, 405 included, is a problem detail
    /// (with <c>UseExceptionHandler()</c>, a malformed or stalled request body is a 400 or 408, not a 500).
    /// A held poll keeps what these middlewares allocate for its whole wait; the standalone server runs
    /// <c>UseCors()</c> only for requests that carry <c>Origin</c>, and leaves endpoints with
    /// <c>ISkipStatusCodePagesMetadata</c> (the poll) out of <c>UseStatusCodePages()</c>, so that a held poll
    /// keeps less.
    /// </summary>
    public static RouteGroupBuilder MapLaharsub(this IEndpointRouteBuilder endpoints, string prefix = "/ps")
    {
        var group = endpoints.MapGroup(prefix)
            .RequireCors(LaharsubServerServiceCollectionExtensions.CorsPolicyName)
            .WithTags("Laharsub")
            // Any request may find the store unreachable (StoreUnavailableHandler), and any client may be
            // over one of its caps (Laharsub:Limits connections and waiting polls, Laharsub:RateLimit).
            .WithMetadata(new ProducesResponseTypeMetadata(StatusCodes.Status503ServiceUnavailable, typeof(ProblemDetails), ["application/problem+json"]))
            .WithMetadata(new ProducesResponseTypeMetadata(StatusCodes.Status429TooManyRequests, typeof(ProblemDetails), ["application/problem+json"]));
        // The routes sit in a group of their own inside the returned one, so that what the host adds to the
        // returned group is known apart from Laharsub's own conventions (the fast path steps aside for it).
        var routes = group.MapGroup("");
        HostConventions.MarkHostEnd(routes);
        var options = endpoints.ServiceProvider.GetRequiredService<IOptions<LaharsubOptions>>().Value;
        routes.MapTopics(rateLimited: options.RateLimit.RequestsPerPeriod > 0);
        routes.MapSubscriptions();
        group.RequireLaharsubAccess(endpoints.ServiceProvider);
        LaharsubAccess.LogMode(endpoints.ServiceProvider);
        HostConventions.MarkHostStart(group);
        ApplyCorsIfTheHostDoesNot(endpoints);
        if (endpoints.ServiceProvider.GetRequiredService<IOptions<LaharsubFastPathOptions>>().Value.Enabled)
        {
            endpoints.ServiceProvider.GetRequiredService<FastPathConnectionHandler>().Serve(prefix);
        }
        return group;
    }

    /// <summary>
    /// An application that maps Laharsub without calling <c>UseCors()</c> would answer every request the
    /// pipeline serves with a 500 (ASP.NET Core refuses to run an endpoint whose CORS metadata no middleware
    /// applied), so on a <c>WebApplication</c> Laharsub's endpoints get the CORS middleware here when none ran
    /// before them. A host that calls <c>UseCors()</c> before <c>MapLaharsub</c> (or turns that check off, as
    /// the standalone server does) is left as it is.
    /// </summary>
    private static void ApplyCorsIfTheHostDoesNot(IEndpointRouteBuilder endpoints)
    {
        if (endpoints is not IApplicationBuilder app
            || endpoints.ServiceProvider.GetRequiredService<IOptions<RouteOptions>>().Value.SuppressCheckForUnhandledSecurityMetadata)
        {
            return;
        }
        app.UseWhen(static context => !context.Items.ContainsKey(CorsAppliedKey)
            && context.GetEndpoint()?.Metadata.GetMetadata<IEnableCorsAttribute>()?.PolicyName == LaharsubServerServiceCollectionExtensions.CorsPolicyName,
            static cors => cors.UseCors());
    }

    /// <summary>What ASP.NET Core's CORS middleware leaves in <see cref="HttpContext.Items"/> once it ran for an endpoint.</summary>
    private const string CorsAppliedKey = "__CorsMiddlewareWithEndpointInvoked";
}
