using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Metadata;
using Microsoft.AspNetCore.Routing;

namespace Laharsub.Server.FastPath;

/// <summary>
/// What the host application added to Laharsub's endpoints through the group that <c>MapLaharsub</c> returned
/// (<c>RequireAuthorization()</c>, <c>AddEndpointFilter(...)</c>, <c>RequireRateLimiting(...)</c>, ...), recorded
/// on each endpoint as metadata. The fast path answers below the pipeline, so it cannot apply any of it: it
/// steps aside (<see cref="PipelineOnlyReasons"/>) rather than answer a request the pipeline would refuse.
/// </summary>
/// <remarks>
/// An endpoint's conventions run in order: the returned group's (Laharsub's own, then the host's), then the
/// inner group's that Laharsub maps its routes on, then the endpoint's own. <see cref="MarkHostStart"/> is the last
/// of Laharsub's conventions on the returned group and <see cref="MarkHostEnd"/> the first on the inner group, so
/// what lies between them is the host's.
/// </remarks>
internal sealed class HostConventions
{
    private HostConventions(IReadOnlyList<object> metadata, int filters)
    {
        Metadata = metadata;
        Filters = filters;
    }

    /// <summary>The metadata the host's conventions added.</summary>
    public IReadOnlyList<object> Metadata { get; }

    /// <summary>How many endpoint filters the host's conventions added.</summary>
    public int Filters { get; }

    /// <summary>Adds, as the last of Laharsub's conventions on the group returned to the host, the mark where the host's begin.</summary>
    public static void MarkHostStart(RouteGroupBuilder returned) =>
        ((IEndpointConventionBuilder)returned).Add(static endpoint => endpoint.Metadata.Add(new Start(endpoint.FilterFactories.Count)));

    /// <summary>Adds, as the first convention of the group Laharsub maps its routes on, the record of what the host's added.</summary>
    public static void MarkHostEnd(RouteGroupBuilder routes) =>
        ((IEndpointConventionBuilder)routes).Add(static endpoint =>
        {
            var metadata = endpoint.Metadata;
            var start = metadata.Count - 1;
            while (start >= 0 && metadata[start] is not Start)
            {
                start--;
            }
            if (start < 0)
            {
                return;
            }
            var mark = (Start)metadata[start];
            var added = metadata.Skip(start + 1).ToArray();
            metadata.RemoveAt(start);
            metadata.Add(new HostConventions(added, endpoint.FilterFactories.Count - mark.Filters));
        });

    /// <summary>
    /// Why the fast path must leave <paramref name="endpoints"/> (Laharsub's, carrying this record) to the
    /// pipeline: empty when nothing the host added or configured could change an answer.
    /// </summary>
    public static IReadOnlyList<string> PipelineOnlyReasons(IEnumerable<Endpoint> endpoints, AuthorizationPolicy? fallbackPolicy)
    {
        var reasons = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var endpoint in endpoints)
        {
            var added = endpoint.Metadata.GetMetadata<HostConventions>();
            if (added is null)
            {
                continue;
            }
            var anonymous = endpoint.Metadata.GetMetadata<IAllowAnonymous>() is not null;
            if (!anonymous && endpoint.Metadata.Any(static item => item is IAuthorizeData or AuthorizationPolicy or IAuthorizationRequirementData))
            {
                reasons.Add("authorization (RequireAuthorization)");
            }
            else if (!anonymous && fallbackPolicy is not null)
            {
                reasons.Add("the fallback authorization policy (AuthorizationOptions.FallbackPolicy)");
            }
            if (added.Filters > 0)
            {
                reasons.Add("endpoint filters (AddEndpointFilter)");
            }
            foreach (var item in added.Metadata)
            {
                if (!IsDocumentationOnly(item) && item is not (IAuthorizeData or AuthorizationPolicy or IAuthorizationRequirementData))
                {
                    reasons.Add("endpoint metadata " + item.GetType().Name);
                }
            }
        }
        return [.. reasons];
    }

    /// <summary>Metadata that only describes an endpoint (OpenAPI, names) and cannot change an answer.</summary>
    private static bool IsDocumentationOnly(object item) =>
        item is ITagsMetadata or IEndpointSummaryMetadata or IEndpointDescriptionMetadata or IProducesResponseTypeMetadata
            or IExcludeFromDescriptionMetadata or IEndpointNameMetadata or IEndpointGroupNameMetadata or IAllowAnonymous;

    /// <summary>Where the host's conventions begin on an endpoint; replaced by the record once they have run.</summary>
    private sealed record Start(int Filters);
}
