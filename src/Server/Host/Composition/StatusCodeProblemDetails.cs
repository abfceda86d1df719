using Microsoft.AspNetCore.Http.Metadata;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Host.Composition;

/// <summary>
/// Gives the standalone server's bare status-code answers a <c>detail</c> that says what to do: a 404
/// for an unknown path lists the resources that exist, a 405 the methods the path allows. Answers that
/// already carry a detail (an unknown topic, say) are left as they are.
/// </summary>
internal static class StatusCodeProblemDetails
{
    public static void Customize(ProblemDetailsContext context)
    {
        var problem = context.ProblemDetails;
        if (problem.Detail is not null)
        {
            return;
        }
        var http = context.HttpContext;
        var path = http.Request.PathBase + http.Request.Path;
        switch (problem.Status)
        {
            case StatusCodes.Status404NotFound:
                problem.Detail = $"There is no resource at '{path}'. This server has {ListResources(http.RequestServices)}; docs/protocol.md describes them.";
                break;
            case StatusCodes.Status405MethodNotAllowed:
                var allowed = http.Response.Headers.Allow.ToString();
                problem.Detail = allowed.Length == 0
                    ? $"{http.Request.Method} is not allowed on '{path}'."
                    : $"{http.Request.Method} is not allowed on '{path}'; use {allowed}.";
                break;
        }
    }

    /// <summary>The routes with their methods, e.g. <c>/ps/topics (GET, HEAD, POST)</c>, from the app's own endpoint table.</summary>
    private static string ListResources(IServiceProvider services)
    {
        var methodsByPath = new SortedDictionary<string, SortedSet<string>>(StringComparer.Ordinal);
        foreach (var endpoint in services.GetRequiredService<EndpointDataSource>().Endpoints)
        {
            if (endpoint is not RouteEndpoint route || route.Metadata.GetMetadata<IExcludeFromDescriptionMetadata>() is { ExcludeFromDescription: true })
            {
                continue;
            }
            var pattern = route.RoutePattern.RawText?.TrimEnd('/') is { Length: > 0 } text ? text : "/";
            if (!pattern.StartsWith('/'))
            {
                pattern = "/" + pattern;
            }
            if (!methodsByPath.TryGetValue(pattern, out var methods))
            {
                methodsByPath[pattern] = methods = new SortedSet<string>(StringComparer.Ordinal);
            }
            foreach (var method in route.Metadata.GetMetadata<IHttpMethodMetadata>()?.HttpMethods ?? [])
            {
                methods.Add(method);
            }
        }
        return string.Join(", ", methodsByPath.Select(pair => pair.Value.Count == 0 ? pair.Key : $"{pair.Key} ({string.Join(", ", pair.Value)})"));
    }
}
