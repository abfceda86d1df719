using System.Net;
using System.Security.Claims;
using Laharsub.Server.Hosting;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests.Support;

/// <summary>
/// An application with its own users that embeds Laharsub under <c>/ps</c>, as the README's embedding section
/// has it: cookie sign-in at <c>/login/{user}</c> (an API's 401 and 403 rather than redirects), authorization,
/// the middlewares the README lists, and what a test adds to its services and to the group <c>MapLaharsub</c> returns.
/// </summary>
internal static class CookieApp
{
    public static async Task<WebApplication> StartAsync(bool fastPath, LogRecorder logs, Action<IServiceCollection>? services = null,
        Action<AuthorizationOptions>? authorization = null, Action<RouteGroupBuilder>? laharsub = null)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        builder.Logging.AddProvider(logs);
        builder.Services.AddLaharsub(options => options.FastPath.Enabled = fastPath);
        services?.Invoke(builder.Services);
        builder.Services.AddAuthentication(CookieAuthenticationDefaults.AuthenticationScheme).AddCookie(options =>
        {
            options.Events.OnRedirectToLogin = context =>
            {
                context.Response.StatusCode = StatusCodes.Status401Unauthorized;
                return Task.CompletedTask;
            };
            options.Events.OnRedirectToAccessDenied = context =>
            {
                context.Response.StatusCode = StatusCodes.Status403Forbidden;
                return Task.CompletedTask;
            };
        });
        builder.Services.AddAuthorization(authorization ?? (_ => { }));
        var app = builder.Build();
        app.UseExceptionHandler();
        app.UseStatusCodePages();
        app.UseCors();
        app.UseWebSockets();
        app.UseAuthentication();
        app.UseAuthorization();
        app.MapPost("/login/{user}", async (HttpContext context, string user) =>
        {
            var identity = new ClaimsIdentity([new Claim(ClaimTypes.Name, user)], CookieAuthenticationDefaults.AuthenticationScheme);
            await context.SignInAsync(new ClaimsPrincipal(identity));
            return Results.NoContent();
        }).AllowAnonymous();
        var group = app.MapLaharsub("/ps");
        laharsub?.Invoke(group);
        await app.StartAsync().WaitAsync(WireClient.Bound);
        return app;
    }

    public static Uri BaseAddress(WebApplication app) =>
        new(app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First());

    /// <summary>A client that keeps its cookies in <paramref name="jar"/> (signed in once it has posted to <c>/login/{user}</c>).</summary>
    public static HttpClient NewClient(WebApplication app, CookieContainer? jar = null) =>
        new(new HttpClientHandler { CookieContainer = jar ?? new CookieContainer(), UseCookies = true }) { BaseAddress = BaseAddress(app) };
}
