using System.Security.Claims;
using Laharsub.Server;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Authentication.Cookies;
using Microsoft.AspNetCore.Authorization;

var builder = WebApplication.CreateBuilder(args);
builder.Services.AddLaharsub();
builder.Services.Configure<LaharsubAuthOptions>(auth => auth.Mode = LaharsubAuthMode.Host);
builder.Services.AddAuthentication(CookieAuthenticationDefaults.AuthenticationScheme).AddCookie(cookies =>
{
    // An API answers 401 rather than redirecting to a login page.
    cookies.Events.OnRedirectToLogin = context =>
    {
        context.Response.StatusCode = StatusCodes.Status401Unauthorized;
        return Task.CompletedTask;
    };
});
builder.Services.AddAuthorization();
builder.Services.AddSingleton<IAuthorizationHandler, OwnTopics>();

var app = builder.Build();
app.UseDefaultFiles();
app.UseStaticFiles();
app.UseCors();
app.UseWebSockets();
app.UseAuthentication();
app.UseAuthorization();

// Two users, no passwords: a sample's sign-in, not a real one.
app.MapPost("/signin/{user:regex(^(ann|bob)$)}", async (HttpContext http, string user) =>
{
    await http.SignInAsync(new ClaimsPrincipal(new ClaimsIdentity([new Claim(ClaimTypes.Name, user)], CookieAuthenticationDefaults.AuthenticationScheme)));
    return Results.NoContent();
});
// The JavaScript client, copied beside the app when it is built (OwnTopics.csproj), as /js/laharsub.js.
app.MapGet("/js/laharsub.js", () => Results.File(Path.Combine(AppContext.BaseDirectory, "wwwroot", "js", "laharsub.js"), "text/javascript"));
app.MapGet("/me", (HttpContext http) => http.User.Identity?.Name is { } name ? Results.Ok(new { name }) : Results.Unauthorized());
app.MapLaharsub("/ps");
app.Run();

/// <summary>A signed-in user may do anything on the topics labelled with their name ("ann-chat"), and list.</summary>
internal sealed class OwnTopics : AuthorizationHandler<LaharsubRequirement, LaharsubTopic>
{
    protected override Task HandleRequirementAsync(AuthorizationHandlerContext context, LaharsubRequirement requirement, LaharsubTopic topic)
    {
        var name = context.User.Identity?.IsAuthenticated == true ? context.User.Identity.Name : null;
        if (name is not null && (topic.Label?.StartsWith(name + "-", StringComparison.Ordinal) == true
            || (requirement.Operation == LaharsubOperation.List && topic.TopicId is null)))
        {
            context.Succeed(requirement);
        }
        return Task.CompletedTask;
    }
}
