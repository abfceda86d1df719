using Laharsub.Server.Access;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Authentication.JwtBearer;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server;

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
        services.TryAddSingleton(provider => new LaharsubTokens(provider.GetRequiredService<IOptions<LaharsubAuthOptions>>(),
            provider.GetService<TimeProvider>() ?? TimeProvider.System));
        services.TryAddSingleton<TopicLabelLookup>();
        services.TryAddSingleton<TopicAccess>();
        services.TryAddSingleton<BackendAuthorization>();
        services.TryAddSingleton<AccessMetrics>();
        services.TryAddSingleton<AccessControl>();
        services.AddHealthChecks().AddCheck<AccessHealthCheck>("laharsub-access");
        return services;
    }

    /// <summary>
    /// In Jwt mode, gives every endpoint of <paramref name="group"/> the filter that enforces the
    /// <see cref="AccessRule"/> it declared where it was mapped (<see cref="EndpointAccess.RequireAccess"/>);
    /// an endpoint that declared none is refused. In Open mode, nothing.
    /// </summary>
    internal static RouteGroupBuilder RequireLaharsubAccess(this RouteGroupBuilder group, IServiceProvider services)
    {
        if (services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value.Mode == LaharsubAuthMode.Open)
        {
            return group;
        }
        var logger = services.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(LaharsubAccess));
        var access = services.GetRequiredService<AccessControl>();
        // Instantiated now so that the mode gauge exists from the start.
        services.GetRequiredService<AccessMetrics>();
        ((IEndpointConventionBuilder)group).Add(endpoint =>
            // The factory runs when the endpoint's request delegate is built, after the endpoint's own
            // conventions (which run after the group's) have declared its rule.
            endpoint.FilterFactories.Add((_, next) =>
            {
                var declared = endpoint.Metadata.OfType<AccessRequirement>().LastOrDefault();
                var rule = declared?.Rule ?? AccessRule.Unclassified;
                if (rule == AccessRule.Unclassified)
                {
                    Log.EndpointWithoutRule(logger, endpoint.DisplayName);
                }
                return invocation => access.InvokeAsync(rule, declared?.Topics, invocation, next);
            }));
        // The rule each endpoint enforces, as metadata, once every convention has run: what Jwt mode adds to
        // an endpoint is visible on it.
        ((IEndpointConventionBuilder)group).Finally(endpoint =>
            endpoint.Metadata.Add(endpoint.Metadata.OfType<AccessRequirement>().LastOrDefault()?.Rule ?? AccessRule.Unclassified));
        return group;
    }

    /// <summary>
    /// Says at start who decides: in Open mode, the one warning that the server is open (called by <c>MapLaharsub</c>,
    /// so that an application that embeds Laharsub warns as the standalone server does); in Host mode, that the
    /// application's authorization decides, refusing to start when the application registered none.
    /// </summary>
    internal static void LogMode(IServiceProvider services)
    {
        var auth = services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value;
        var mode = auth.Mode;
        var logger = services.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(LaharsubAccess));
        if (mode == LaharsubAuthMode.Open)
        {
            Log.OpenMode(logger);
        }
        else if (mode == LaharsubAuthMode.Host)
        {
            if (services.GetService<IAuthorizationService>() is null)
            {
                throw new InvalidOperationException(
                    "Laharsub:Auth:Mode is Host, but the application registered no authorization: call builder.Services.AddAuthorization() and register an " +
                    "AuthorizationHandler<LaharsubRequirement, LaharsubTopic> that decides who may do what (docs/access-control.md, \"Your app's own users\").");
            }
            Log.HostMode(logger);
        }
        else if (mode == LaharsubAuthMode.Backend)
        {
            Log.BackendMode(logger, auth.Backend.Url);
        }
    }

    /// <summary>
    /// For the standalone host: in Jwt mode, runs the authentication middleware (so that rate limits see
    /// the token's subject).
    /// </summary>
    internal static void UseLaharsubAccess(this WebApplication app)
    {
        var auth = app.Services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value;
        var logger = app.Services.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(LaharsubAccess));
        app.Services.GetRequiredService<AccessMetrics>();
        if (auth.Mode == LaharsubAuthMode.Host)
        {
            throw new InvalidOperationException(
                "Laharsub:Auth:Mode is Host, which lets an application that embeds Laharsub decide with its own authorization; the standalone server has no such " +
                "application. Use Backend (your application's HTTP endpoint decides), Jwt (tokens your application mints) or Open.");
        }
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
        }
    }

    /// <summary>The key of ASP.NET Core's <c>AuthAppBuilderExtensions</c> (internal), checked by <c>InOpenModeNoRequestPassesTheAuthenticationMiddleware</c>.</summary>
    private const string AuthenticationMiddlewareSetKey = "__AuthenticationMiddlewareSet";
}
