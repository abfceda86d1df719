using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Access;

/// <summary>
/// What an endpoint declares where it is mapped so that Jwt mode can check it: its <see cref="AccessRule"/>,
/// and for a subscription, how to find the topics it names. The endpoint declares them rather than access
/// control guessing from route text, and access control never parses a request format of its own.
/// </summary>
internal static class EndpointAccess
{
    /// <summary>
    /// Declares the permission the endpoint needs (an endpoint without one is refused in Jwt mode), and
    /// for <see cref="AccessRule.Poll"/> how to find the topics a request names.
    /// </summary>
    public static TBuilder RequireAccess<TBuilder>(this TBuilder builder, AccessRule rule, SubscribedTopics? topics = null)
        where TBuilder : IEndpointConventionBuilder =>
        builder.WithMetadata(new AccessRequirement(rule, topics));
}

/// <summary>An endpoint's declared <see cref="AccessRule"/>, as endpoint metadata.</summary>
internal sealed record AccessRequirement(AccessRule Rule, SubscribedTopics? Topics);

/// <summary>
/// Reads the topic ids a subscription request names into <paramref name="topicIds"/>; false when the
/// request is not valid, which access control leaves to the endpoint's own 400 (it reveals nothing).
/// </summary>
internal delegate bool SubscribedTopics(HttpContext context, List<long> topicIds);

/// <summary>A request body that names a label (creating a topic), which <c>create</c> permissions match.</summary>
internal interface ILabelledRequest
{
    /// <summary>The requested label, or null for none.</summary>
    string? Label { get; }

    /// <summary>Whether the body is valid; an invalid one is left to the endpoint's own 400.</summary>
    bool IsValid { get; }
}
