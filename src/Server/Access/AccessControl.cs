using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authorization;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Options;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Access;

/// <summary>
/// The endpoint filter of Jwt and Host modes: finds out who calls (Jwt: a token or anonymous; Host: the
/// application's user) and whether the <see cref="AccessRule"/> of the endpoint allows it (<see cref="TopicAccess"/>),
/// before the endpoint runs, so a refused request changes nothing. In Open mode it is not attached at all.
/// </summary>
internal sealed class AccessControl(
    IOptions<LaharsubAuthOptions> auth, TopicAccess topics, AccessMetrics metrics, BackendAuthorization backend)
{
    private readonly LaharsubPermissions _anonymous = ParseAnonymous(auth.Value.Anonymous);

    public LaharsubPermissions Anonymous => _anonymous;

    public ValueTask<object?> InvokeAsync(AccessRule rule, SubscribedTopics? requested, EndpointFilterInvocationContext invocation, EndpointFilterDelegate next) => rule switch
    {
        AccessRule.CreateTopic => CreateAsync(invocation, next),
        AccessRule.ListTopics => ListAsync(invocation, next),
        AccessRule.TopicInfo => OneTopicAsync(invocation, next, LaharsubOperation.List, LaharsubOperation.Subscribe),
        AccessRule.Publish => OneTopicAsync(invocation, next, LaharsubOperation.Publish, null),
        AccessRule.DeleteTopic => OneTopicAsync(invocation, next, LaharsubOperation.Delete, null),
        AccessRule.Presence => OneTopicAsync(invocation, next, LaharsubOperation.Presence, LaharsubOperation.Subscribe),
        AccessRule.State => OneTopicAsync(invocation, next, LaharsubOperation.Subscribe, null),
        AccessRule.Poll when requested is not null => EveryTopicAsync(requested, LaharsubOperation.Subscribe, invocation, next),
        AccessRule.PublishMany when requested is not null => EveryTopicAsync(requested, LaharsubOperation.Publish, invocation, next),
        AccessRule.Admin => NoTopicAsync(LaharsubOperation.Admin, invocation, next),
        _ => ValueTask.FromResult<object?>(AccessResults.NoRule(invocation.HttpContext, metrics)),
    };

    private async ValueTask<object?> CreateAsync(EndpointFilterInvocationContext invocation, EndpointFilterDelegate next)
    {
        var caller = await IdentifyAsync(invocation.HttpContext).ConfigureAwait(false);
        if (caller.Refusal is not null)
        {
            return caller.Refusal;
        }
        var request = invocation.Arguments.OfType<ILabelledRequest>().FirstOrDefault();
        if (request is null || !request.IsValid || await TopicAccess.AllowsAsync(caller.Access, LaharsubOperation.Create, request.Label, invocation.HttpContext.RequestAborted).ConfigureAwait(false))
        {
            // A malformed body is refused by the endpoint itself (400), which reveals nothing.
            return await next(invocation).ConfigureAwait(false);
        }
        return Refuse(invocation.HttpContext, caller, LaharsubOperation.Create, topicId: null, request.Label);
    }

    private async ValueTask<object?> ListAsync(EndpointFilterInvocationContext invocation, EndpointFilterDelegate next)
    {
        var http = invocation.HttpContext;
        var caller = await IdentifyAsync(http).ConfigureAwait(false);
        if (caller.Refusal is not null)
        {
            return caller.Refusal;
        }
        if (caller.Access.Grants is { } permissions ? permissions.AllowsNothing(LaharsubOperation.List)
            : !await TopicAccess.AllowsAsync(caller.Access, LaharsubOperation.List, label: null, http.RequestAborted).ConfigureAwait(false))
        {
            return Refuse(http, caller, LaharsubOperation.List, topicId: null, label: null);
        }
        if (!TopicAccess.AllowsEveryTopic(caller.Access, LaharsubOperation.List))
        {
            http.Features.Set<ITopicVisibility>(new ListableTopics(caller.Access));
        }
        return await next(invocation).ConfigureAwait(false);
    }

    private async ValueTask<object?> NoTopicAsync(LaharsubOperation operation, EndpointFilterInvocationContext invocation, EndpointFilterDelegate next)
    {
        var caller = await IdentifyAsync(invocation.HttpContext).ConfigureAwait(false);
        if (caller.Refusal is not null)
        {
            return caller.Refusal;
        }
        return await TopicAccess.AllowsAsync(caller.Access, operation, label: null, invocation.HttpContext.RequestAborted).ConfigureAwait(false)
            ? await next(invocation).ConfigureAwait(false)
            : Refuse(invocation.HttpContext, caller, operation, topicId: null, label: null);
    }

    private async ValueTask<object?> OneTopicAsync(EndpointFilterInvocationContext invocation, EndpointFilterDelegate next,
        LaharsubOperation operation, LaharsubOperation? alternative)
    {
        var http = invocation.HttpContext;
        var caller = await IdentifyAsync(http).ConfigureAwait(false);
        if (caller.Refusal is not null)
        {
            return caller.Refusal;
        }
        if (!PlainInteger.TryParseId(http.Request.RouteValues["topicId"] as string, out var topicId))
        {
            return await next(invocation).ConfigureAwait(false);
        }
        return await topics.CheckAsync(caller.Access, operation, topicId, http.RequestAborted, alternative).ConfigureAwait(false) is { } denial
            ? Refuse(http, caller, denial.Operation, denial.TopicId, label: null)
            : await next(invocation).ConfigureAwait(false);
    }

    /// <summary>A poll (<c>subscribe</c>) or a publish to several topics (<c>publish</c>): the operation on every topic the request names.</summary>
    private async ValueTask<object?> EveryTopicAsync(SubscribedTopics readTopics, LaharsubOperation operation, EndpointFilterInvocationContext invocation, EndpointFilterDelegate next)
    {
        var http = invocation.HttpContext;
        var caller = await IdentifyAsync(http).ConfigureAwait(false);
        if (caller.Refusal is not null)
        {
            return caller.Refusal;
        }
        if (TopicAccess.AllowsEveryTopic(caller.Access, operation))
        {
            return await next(invocation).ConfigureAwait(false);
        }
        // Read a second time here (the endpoint parses the request again) only when the caller's grant is
        // narrower than every topic; an invalid request is left to the endpoint's 400.
        var topicIds = new List<long>();
        if (!readTopics(http, topicIds))
        {
            return await next(invocation).ConfigureAwait(false);
        }
        return await topics.CheckEveryAsync(caller.Access, operation, topicIds, http.RequestAborted).ConfigureAwait(false) is { } denial
            ? Refuse(http, caller, denial.Operation, denial.TopicId, label: null)
            : await next(invocation).ConfigureAwait(false);
    }

    /// <summary>
    /// For what a stream does after its request was let in (a WebSocket's <c>subscribe</c> and
    /// <c>publish</c> frames) and the presence endpoint's member list: whether its caller may do
    /// <paramref name="operation"/> on the topic. Always in Open mode.
    /// </summary>
    public async ValueTask<bool> AllowsAsync(HttpContext http, LaharsubOperation operation, long topicId)
    {
        if (auth.Value.Mode == LaharsubAuthMode.Open)
        {
            return true;
        }
        var caller = await IdentifyAsync(http).ConfigureAwait(false);
        if (caller.Refusal is not null)
        {
            return false;
        }
        return await topics.CheckAsync(caller.Access, operation, topicId, http.RequestAborted).ConfigureAwait(false) is null;
    }

    /// <summary>The presence identity of a request in Jwt mode: its token's subject; null without a valid token, or in Open mode.</summary>
    public async ValueTask<string?> SubjectAsync(HttpContext http)
    {
        if (!CarriesToken(http))
        {
            return null;
        }
        var result = await http.AuthenticateAsync(LaharsubAccess.SchemeName).ConfigureAwait(false);
        return result.Succeeded && result.Principal.Identity is LaharsubIdentity identity ? identity.Subject : null;
    }

    /// <summary>
    /// When a stream of this request ends, telling its client to come back: when its token expires (Jwt mode; null
    /// without a token, or in Open mode), or after Laharsub:Auth:StreamDecisionLifetime (Host and Backend modes).
    /// </summary>
    public async ValueTask<StreamLifetime?> StreamLifetimeAsync(HttpContext http, TimeProvider clock)
    {
        if (auth.Value.Mode is LaharsubAuthMode.Host or LaharsubAuthMode.Backend)
        {
            return new StreamLifetime(clock.GetUtcNow() + auth.Value.StreamDecisionLifetime, Redecide: true);
        }
        if (!CarriesToken(http))
        {
            return null;
        }
        var result = await http.AuthenticateAsync(LaharsubAccess.SchemeName).ConfigureAwait(false);
        return result.Succeeded && result.Principal.Identity is LaharsubIdentity { ExpiresAt: { } expiresAt } ? new StreamLifetime(expiresAt, Redecide: false) : null;
    }

    /// <summary>Whether a stream of this request ends by itself: a token's (Jwt mode), or in Host and Backend modes, where access is decided again.</summary>
    public bool EndsStreams(HttpContext http) => auth.Value.Mode is LaharsubAuthMode.Host or LaharsubAuthMode.Backend || CarriesToken(http);

    /// <summary>Whether the request carries a token that Jwt mode checks (in the header, or in a stream's query).</summary>
    public bool CarriesToken(HttpContext http) =>
        auth.Value.Mode == LaharsubAuthMode.Jwt
        && (http.Request.Headers.ContainsKey(HeaderNames.Authorization) || HasQueryToken(http.Request));

    /// <summary>
    /// Who calls. Host mode: the application's user, as its authentication found it. Jwt mode: a request without
    /// <c>Authorization</c> is anonymous at no cost; one with a bearer token gets the token's permissions (plus the
    /// anonymous ones), or a 401 refusal when the token is bad.
    /// </summary>
    private async ValueTask<Caller> IdentifyAsync(HttpContext http)
    {
        if (auth.Value.Mode == LaharsubAuthMode.Backend)
        {
            var headers = http.Request.Headers;
            var credentials = new BackendCredentials(headers.Authorization.Count > 0 ? headers.Authorization.ToString() : null,
                headers.Cookie.Count > 0 ? headers.Cookie.ToString() : null);
            return new Caller(new AccessCaller(null, Credentials: credentials, Backend: backend), Identified: credentials.Present, Refusal: null);
        }
        if (auth.Value.Mode == LaharsubAuthMode.Host)
        {
            var user = http.User;
            return new Caller(new AccessCaller(null, user, http.RequestServices.GetRequiredService<IAuthorizationService>()),
                Identified: user.Identity?.IsAuthenticated == true, Refusal: null);
        }
        // Streams may carry the token in the query (docs/protocol.md, "Tokens on streams"); the JwtBearer
        // scheme reads it from there (ConfigureLaharsubJwtBearer).
        if (!http.Request.Headers.ContainsKey(HeaderNames.Authorization) && !HasQueryToken(http.Request))
        {
            return new Caller(new AccessCaller(_anonymous), Identified: false, Refusal: null);
        }
        var result = await http.AuthenticateAsync(LaharsubAccess.SchemeName).ConfigureAwait(false);
        if (result.Succeeded && result.Principal.Identity is LaharsubIdentity identity)
        {
            // Kept for the endpoint: a subscription's presence identity is the token's subject.
            http.User = result.Principal;
            return new Caller(new AccessCaller(identity.Permissions), Identified: true, Refusal: null);
        }
        if (result.None)
        {
            // Another kind of credentials (Basic, say): not a token, so the caller is anonymous.
            return new Caller(new AccessCaller(_anonymous), Identified: false, Refusal: null);
        }
        return new Caller(new AccessCaller(LaharsubPermissions.None), Identified: true, AccessResults.BadToken(http, result.Failure, metrics));
    }

    /// <summary>Whether the request carries <c>access_token</c> in its query (looked for without parsing the query into a collection).</summary>
    internal static bool HasQueryToken(HttpRequest request) =>
        request.QueryString.Value is { } query && query.Contains(AccessTokenParameter + "=", StringComparison.Ordinal)
        // The subscription URL only: it is what browsers open as an EventSource or a WebSocket.
        && request.Path.Value is { } path && path.EndsWith("/subscriptions", StringComparison.Ordinal);

    /// <summary>The query parameter of a stream's token.</summary>
    internal const string AccessTokenParameter = "access_token";

    private IResult Refuse(HttpContext http, Caller caller, LaharsubOperation operation, long? topicId, string? label) =>
        caller.Access.Grants is not { } permissions
            ? AccessResults.RefusedByApplication(caller.Identified, operation, topicId, label, metrics)
        : caller.Identified
            ? AccessResults.Forbidden(http, permissions, operation, topicId, label, metrics)
            : AccessResults.TokenRequired(http, _anonymous, operation, topicId, metrics);

    private static LaharsubPermissions ParseAnonymous(string? setting) =>
        LaharsubPermissions.TryParseAnonymous(setting, out var permissions, out _) ? permissions : LaharsubPermissions.None;

    /// <summary>A caller, whether it identified itself (a token, or a signed-in user), and the 401 of a bad token.</summary>
    private readonly record struct Caller(AccessCaller Access, bool Identified, IResult? Refusal);

    /// <summary>The topics a listing shows a caller whose <c>list</c> grant is narrower than every topic.</summary>
    private sealed class ListableTopics(AccessCaller caller) : ITopicVisibility
    {
        public async ValueTask<bool> IsVisibleAsync(TopicInfo topic) => caller.Grants is { } permissions
            ? permissions.Allows(LaharsubOperation.List, topic.TopicId, topic.Label)
            : await caller.AuthorizesAsync(LaharsubOperation.List, new LaharsubTopic(topic.TopicId, topic.Label), CancellationToken.None).ConfigureAwait(false);
    }
}
