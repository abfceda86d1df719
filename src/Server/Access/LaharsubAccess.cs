using Laharsub.Server.Hosting;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.JwtBearer;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Routing.Patterns;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Access;

/// <summary>
/// Wires access control into Laharsub: services (always registered; they cost nothing until used), the
/// per-endpoint filter (attached only in Jwt mode, so Open mode adds no work to any request), and the
/// standalone host's authentication middleware.
/// </summary>
public static partial class LaharsubAccess
{
    /// <summary>The authentication scheme of Laharsub's tokens, registered in Jwt mode only so that a host's own schemes are left alone.</summary>
    public const string SchemeName = "Laharsub";

    /// <summary>Registers the options (validated at start), the JwtBearer scheme for Jwt mode, the filter's services, metrics and health check.</summary>
    internal static IServiceCollection AddLaharsubAccess(this IServiceCollection services)
    {
        services.AddOptions<LaharsubAuthOptions>().BindConfiguration(LaharsubAuthOptions.SectionName).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<LaharsubAuthOptions>, LaharsubAuthOptionsValidator>());
        services.AddAuthentication();
        // What AddJwtBearer(SchemeName) does, except that the scheme exists only in Jwt mode: an extra
        // scheme would stop ASP.NET Core from inferring a host's own single scheme as its default.
        services.AddOptions<AuthenticationOptions>().Configure<IOptions<LaharsubAuthOptions>>((authentication, laharsub) =>
        {
            if (laharsub.Value.Mode == LaharsubAuthMode.Jwt)
            {
                authentication.AddScheme(SchemeName, scheme => scheme.HandlerType = typeof(JwtBearerHandler));
            }
        });
        services.TryAddTransient<JwtBearerHandler>();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<JwtBearerOptions>, JwtBearerPostConfigureOptions>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IConfigureOptions<JwtBearerOptions>, ConfigureLaharsubJwtBearer>());
        services.TryAddSingleton<AccessTokenCache>();
        services.TryAddSingleton<TopicLabelLookup>();
        services.TryAddSingleton<AccessMetrics>();
        services.TryAddSingleton<AccessControl>();
        services.AddHealthChecks().AddCheck<AccessHealthCheck>("laharsub-access");
        return services;
    }

    /// <summary>
    /// In Jwt mode, gives every endpoint of <paramref name="group"/> its <see cref="AccessRule"/> (from its
    /// method and route, which are the protocol) and the filter that enforces it. In Open mode, nothing.
    /// </summary>
    internal static RouteGroupBuilder RequireLaharsubAccess(this RouteGroupBuilder group, IServiceProvider services)
    {
        if (services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value.Mode != LaharsubAuthMode.Jwt)
        {
            return group;
        }
        var access = services.GetRequiredService<AccessControl>();
        var logger = services.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(LaharsubAccess));
        // Instantiated now so that the mode gauge exists from the start.
        services.GetRequiredService<AccessMetrics>();
        ((IEndpointConventionBuilder)group).Add(endpoint =>
        {
            var rule = Classify(endpoint);
            if (rule == AccessRule.Unclassified)
            {
                Log.EndpointWithoutRule(logger, endpoint.DisplayName);
            }
            endpoint.Metadata.Add(rule);
            endpoint.FilterFactories.Add((_, next) => invocation => access.InvokeAsync(rule, invocation, next));
        });
        return group;
    }

    /// <summary>
    /// For the standalone host: in Jwt mode, runs the authentication middleware (so that rate limits see
    /// the token's subject); in Open mode, logs the one warning that the server is open.
    /// </summary>
    internal static void UseLaharsubAccess(this WebApplication app)
    {
        var auth = app.Services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value;
        var logger = app.Services.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(LaharsubAccess));
        app.Services.GetRequiredService<AccessMetrics>();
        if (auth.Mode == LaharsubAuthMode.Jwt)
        {
            app.UseAuthentication();
            Log.JwtMode(logger, string.IsNullOrWhiteSpace(auth.Anonymous) ? "nothing" : auth.Anonymous);
        }
        else
        {
            // WebApplication adds the authentication middleware by itself whenever authentication services
            // are registered, which AddLaharsub does for Jwt mode. In Open mode it would authenticate
            // nothing, yet cost every request a lookup of the schemes and a handler provider in the
            // request's scope, kept by a waiting poll for its whole wait. The mark UseAuthentication leaves
            // on the application tells WebApplication that it was placed already.
            ((IApplicationBuilder)app).Properties.TryAdd(AuthenticationMiddlewareSetKey, true);
            Log.OpenMode(logger);
        }
    }

    /// <summary>The key of ASP.NET Core's <c>AuthAppBuilderExtensions</c> (internal), checked by <c>InOpenModeNoRequestPassesTheAuthenticationMiddleware</c>.</summary>
    private const string AuthenticationMiddlewareSetKey = "__AuthenticationMiddlewareSet";

    private static AccessRule Classify(EndpointBuilder endpoint)
    {
        if (endpoint is not RouteEndpointBuilder { RoutePattern: var pattern }
            || endpoint.Metadata.OfType<HttpMethodMetadata>().FirstOrDefault() is not { HttpMethods: var methods }
            // HEAD reads what GET reads, so it needs the same permission; any other pair is unclassified.
            || methods.Where(m => m != HttpMethods.Head || methods.Count == 1).ToList() is not [var method])
        {
            return AccessRule.Unclassified;
        }
        var segments = pattern.PathSegments;
        var last = segments.Count > 0 ? segments[^1] : null;
        var previous = segments.Count > 1 ? segments[^2] : null;
        if (IsLiteral(last, "subscriptions"))
        {
            return method == HttpMethods.Get ? AccessRule.Poll : AccessRule.Unclassified;
        }
        if (IsLiteral(last, "topics"))
        {
            return method == HttpMethods.Get ? AccessRule.ListTopics : method == HttpMethods.Post ? AccessRule.CreateTopic : AccessRule.Unclassified;
        }
        if (IsLiteral(previous, "topics") && last is { Parts: [RoutePatternParameterPart { Name: "topicId" }] })
        {
            return method == HttpMethods.Get ? AccessRule.TopicInfo
                : method == HttpMethods.Post ? AccessRule.Publish
                : method == HttpMethods.Delete ? AccessRule.DeleteTopic
                : AccessRule.Unclassified;
        }
        return AccessRule.Unclassified;
    }

    private static bool IsLiteral(RoutePatternPathSegment? segment, string text) =>
        segment is { Parts: [RoutePatternLiteralPart literal] } && literal.Content == text;

    private static partial class Log
    {
        [LoggerMessage(EventId = 20, Level = LogLevel.Warning,
            Message = "Laharsub:Auth:Mode is Open: anyone who can reach this server may create, publish to, read, list and delete any topic. " +
                "To lock it down set Laharsub:Auth:Mode=Jwt with Laharsub:Auth:Jwt:SigningKey, Issuer and Audience (README, 'Lock it down'; docs/access-control.md).")]
        public static partial void OpenMode(ILogger logger);

        [LoggerMessage(EventId = 21, Level = LogLevel.Information,
            Message = "Laharsub:Auth:Mode is Jwt: requests need a bearer token; without one they may do: {Anonymous}.")]
        public static partial void JwtMode(ILogger logger, string anonymous);

        [LoggerMessage(EventId = 22, Level = LogLevel.Error,
            Message = "Endpoint {Endpoint} has no access rule, so Jwt mode refuses every request to it with 403. Give it one in Access/LaharsubAccess.Classify.")]
        public static partial void EndpointWithoutRule(ILogger logger, string? endpoint);
    }
}
