using Laharsub.Server.Access;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Host.Admin;

/// <summary>
/// <c>/admin</c>: a page for operators (live counts and rates, a chart of the last minutes, the topic
/// list with search) and the JSON it reads, <c>/admin/stats</c>. The page's files are served by
/// endpoints rather than the static-file middleware, so that one convention on the group protects all
/// of it. See <see cref="AdminOptions.Enabled"/> for when it is on.
/// </summary>
internal static class AdminEndpoints
{
    private static readonly Dictionary<string, string> PageFiles = new()
    {
        ["index.html"] = "text/html; charset=utf-8",
        ["admin.css"] = "text/css; charset=utf-8",
        ["admin.js"] = "text/javascript; charset=utf-8",
    };

    public static WebApplicationBuilder AddLaharsubAdmin(this WebApplicationBuilder builder)
    {
        builder.Services.AddOptions<AdminOptions>().BindConfiguration(AdminOptions.SectionName).ValidateDataAnnotations().ValidateOnStart()
            .PostConfigure(admin => admin.Enabled ??= true);
        if (builder.Configuration.GetValue<bool?>($"{AdminOptions.SectionName}:{nameof(AdminOptions.Enabled)}") ?? true)
        {
            builder.Services.AddSingleton<AdminStatistics>();
            builder.Services.AddHostedService(services => services.GetRequiredService<AdminStatistics>());
        }
        return builder;
    }

    public static WebApplication MapLaharsubAdmin(this WebApplication app)
    {
        if (app.Services.GetRequiredService<IOptions<AdminOptions>>().Value.Enabled != true)
        {
            return app;
        }
        var root = Path.Combine(AppContext.BaseDirectory, "admin");
        var admin = app.MapGroup("/admin").ExcludeFromDescription();
        // The page's files hold no data, so they are open in every mode: in Jwt mode the page asks for a
        // token and sends it with every request. What it shows comes from /admin/stats, which needs the
        // admin permission in Jwt mode, and from the REST API, which needs list.
        admin.MapGet("/", Results<PhysicalFileHttpResult, RedirectHttpResult> (HttpContext context) => context.Request.Path.Value!.EndsWith('/')
            ? Page(root, "index.html")
            : TypedResults.Redirect(context.Request.PathBase + "/admin/" + context.Request.QueryString));
        admin.MapGet("/{file}", Results<PhysicalFileHttpResult, NotFound> (string file) => PageFiles.ContainsKey(file) ? Page(root, file) : TypedResults.NotFound());
        var data = admin.MapGroup("").RequireLaharsubAccess(app.Services);
        data.MapGet("/stats", async Task<Ok<AdminStats>> (HttpResponse response, AdminStatistics statistics, CancellationToken cancellationToken) =>
        {
            response.Headers.CacheControl = "no-store";
            return TypedResults.Ok(await statistics.SnapshotAsync(cancellationToken).ConfigureAwait(false));
        }).RequireAccess(AccessRule.Admin);
        return app;
    }

    private static PhysicalFileHttpResult Page(string root, string file) => TypedResults.PhysicalFile(Path.Combine(root, file), PageFiles[file]);
}
