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
            .PostConfigure(admin => admin.Enabled ??= IsOpenMode(builder.Configuration));
        if (builder.Configuration.GetValue<bool?>($"{AdminOptions.SectionName}:{nameof(AdminOptions.Enabled)}") ?? IsOpenMode(builder.Configuration))
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
        // ACCESS CONTROL: the page checks no token yet, so it is off by default in Jwt mode (AdminOptions).
        // To offer it there, this group must require an operator's token (e.g. a policy on the
        // laharsub claim), and the page must send that token, also for the GET /ps/topics it calls.
        // In Open mode it is open, like everything else.
        admin.MapGet("/", Results<PhysicalFileHttpResult, RedirectHttpResult> (HttpContext context) => context.Request.Path.Value!.EndsWith('/')
            ? Page(root, "index.html")
            : TypedResults.Redirect(context.Request.PathBase + "/admin/"));
        admin.MapGet("/{file}", Results<PhysicalFileHttpResult, NotFound> (string file) => PageFiles.ContainsKey(file) ? Page(root, file) : TypedResults.NotFound());
        admin.MapGet("/stats", async Task<Ok<AdminStats>> (HttpResponse response, AdminStatistics statistics, CancellationToken cancellationToken) =>
        {
            response.Headers.CacheControl = "no-store";
            return TypedResults.Ok(await statistics.SnapshotAsync(cancellationToken).ConfigureAwait(false));
        });
        return app;
    }

    private static bool IsOpenMode(IConfiguration configuration) =>
        configuration.GetValue($"{LaharsubAuthOptions.SectionName}:{nameof(LaharsubAuthOptions.Mode)}", LaharsubAuthMode.Open) == LaharsubAuthMode.Open;

    private static PhysicalFileHttpResult Page(string root, string file) => TypedResults.PhysicalFile(Path.Combine(root, file), PageFiles[file]);
}
