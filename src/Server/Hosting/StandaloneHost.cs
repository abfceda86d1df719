using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Hosting;

/// <summary>
/// The standalone Laharsub server: the composition <c>Program.cs</c> runs, shared with the tests and
/// tools so that they exercise exactly what operators run.
/// </summary>
public static class StandaloneHost
{
    /// <summary>Builds the standalone server; <paramref name="configure"/> may adjust the builder (tests use it to add services or options).</summary>
    public static WebApplication Build(string[] args, Action<WebApplicationBuilder>? configure = null)
    {
        var builder = WebApplication.CreateBuilder(new WebApplicationOptions
        {
            Args = args,
            ApplicationName = typeof(StandaloneHost).Assembly.GetName().Name,
        });
        builder.Services.AddLaharsub();
        // Per-request framework logs cost more than a poll itself; keep them off wherever the host is
        // started from, even when appsettings.json is not in the working directory.
        builder.Logging.AddFilter("Microsoft.AspNetCore", LogLevel.Warning);
        // Waiting polls are answered as soon as shutdown starts; the rest is connections draining.
        builder.Services.Configure<Microsoft.Extensions.Hosting.HostOptions>(host => host.ShutdownTimeout = TimeSpan.FromSeconds(10));
        configure?.Invoke(builder);

        var app = builder.Build();
        app.UseExceptionHandler();
        app.UseStatusCodePages();
        app.UseCors();
        app.MapLaharsub("/ps");
        app.MapHealthChecks("/health");
        return app;
    }
}
