using Laharsub.Server.Access;
using Laharsub.Server.Hosting;
using Laharsub.Server.FastPath;
using Laharsub.Server.Limits;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http.Metadata;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Microsoft.Net.Http.Headers;

namespace Laharsub.Server.Host.Composition;

/// <summary>
/// The standalone Laharsub server: the composition <c>Program.cs</c> runs, shared with the tests and
/// tools so that they exercise exactly what operators run.
/// </summary>
internal static class StandaloneHost
{
    /// <summary>ASP.NET Core's per-request log category ("Request starting", "Request finished").</summary>
    internal const string RequestDiagnosticsCategory = "Microsoft.AspNetCore.Hosting.Diagnostics";

    /// <summary>ASP.NET Core's log categories, all under this prefix.</summary>
    internal const string FrameworkCategory = "Microsoft.AspNetCore";

    /// <summary>
    /// How long a stop (SIGTERM) may take: waiting polls are answered as soon as it starts; the rest is
    /// connections draining. deploy/laharsub.service gives systemd's TimeoutStopSec more than this.
    /// </summary>
    internal static readonly TimeSpan ShutdownTimeout = TimeSpan.FromSeconds(10);

    /// <summary>Builds the standalone server; <paramref name="configure"/> may adjust the builder (tests use it to add services or options).</summary>
    public static WebApplication Build(string[] args, Action<WebApplicationBuilder>? configure = null)
    {
        var builder = WebApplication.CreateBuilder(new WebApplicationOptions
        {
            Args = args,
            ApplicationName = typeof(StandaloneHost).Assembly.GetName().Name,
        });
        DefaultAddress.ApplyUnlessConfigured(builder);
        builder.Services.AddLaharsub();
        builder.Services.AddHealthProbes();
        builder.Services.AddProblemDetails(problems => problems.CustomizeProblemDetails = StatusCodeProblemDetails.Customize);
        builder.Services.AddOptions<LaharsubForwardedHeadersOptions>().BindConfiguration(LaharsubForwardedHeadersOptions.SectionName).ValidateOnStart();
        builder.Services.AddSingleton<IValidateOptions<LaharsubForwardedHeadersOptions>, LaharsubForwardedHeadersOptions.Validator>();
        // Defaults for three log categories, each added after configuration is read and only when
        // configuration sets no level for it, so that an operator's own level wins (appsettings.json, the
        // command line, the environment):
        // - Microsoft.AspNetCore at Warning: per-request framework logs cost more than a poll itself, and
        //   appsettings.json may not be in the working directory.
        // - Request diagnostics off: ASP.NET Core starts an Activity and a log scope for every request
        //   whenever that category logs at any level, tracing or not: objects that a held poll keeps for its
        //   whole wait, and that the GC copies once per poll (docs/performance-history.md, "What pauses the
        //   server"). It logs nothing at Warning or above that the host does not report otherwise (a failed
        //   start still throws). A configured tracer (OpenTelemetry) still gets its activities: it listens
        //   to the source.
        // - Kestrel's connections at Error: at Warning it logs a line per connection refused at the
        //   connection limit, thousands under a flood; ConnectionRefusalLog says it once a minute instead.
        builder.Services.PostConfigure<LoggerFilterOptions>(filters =>
        {
            foreach (var (category, level) in new[] { (FrameworkCategory, LogLevel.Warning), (RequestDiagnosticsCategory, LogLevel.None), (ConnectionRefusalLog.KestrelConnectionsCategory, LogLevel.Error) })
            {
                if (!filters.Rules.Any(rule => rule.CategoryName == category))
                {
                    filters.Rules.Add(new LoggerFilterRule(providerName: null, category, level, filter: null));
                }
            }
        });
        // A held poll keeps whatever its request allocated for its whole wait, and the GC copies it
        // (docs/performance-history.md). UseCors resolves its policy provider from the request's services,
        // which opens a DI scope, and marks HttpContext.Items for EndpointMiddleware's check that CORS
        // middleware ran, which creates the items dictionary, for every request, cross-origin or not. Only
        // requests that carry Origin go through it (below); the check would catch CORS middleware left out
        // of the pipeline, and this host puts it in.
        builder.Services.Configure<RouteOptions>(routes => routes.SuppressCheckForUnhandledSecurityMetadata = true);
        RaiseRequestLineLimit(builder);
        UseFastPathByDefault(builder);
        builder.LimitConnections();
        builder.Services.Configure<Microsoft.Extensions.Hosting.HostOptions>(host => host.ShutdownTimeout = ShutdownTimeout);
        configure?.Invoke(builder);
        builder.Services.LoadNoKeyRingAtStart();

        var app = builder.Build();
        LaharsubForwardedHeadersOptions.Apply(app);
        // The subscription URL's WebSocket transport, over HTTP/1.1 (a GET upgrade) and HTTP/2 (an extended
        // CONNECT, which MapLaharsub maps too).
        app.UseWebSockets();
        app.UseRouting();
        app.UseExceptionHandler();
        // Endpoints that write every answer's body themselves (the poll) say so with
        // ISkipStatusCodePagesMetadata; the middleware would still keep a feature, an items dictionary and
        // a state machine for each of their requests, for a held poll's whole wait.
        app.UseWhen(static context => context.GetEndpoint()?.Metadata.GetMetadata<ISkipStatusCodePagesMetadata>() is null,
            static pages => pages.UseStatusCodePages());
        app.UseWhen(static context => context.Request.Headers.ContainsKey(HeaderNames.Origin), static cors => cors.UseCors());
        app.UseClientConnectionLimit();
        app.UseLaharsubAccess();
        app.UseRateLimiter();
        app.MapLaharsub("/ps");
        // This pipeline accepts WebSockets and runs Laharsub's CORS policy on requests from pages, which is
        // what the fast path's 101 answers; with a list of allowed origins, upgrades from pages stay here.
        var cors = app.Services.GetRequiredService<IOptions<LaharsubOptions>>().Value.Cors;
        app.Services.GetRequiredService<FastPathConnectionHandler>().ServeWebSockets(corsAllowsAnyOrigin: cors.AllowsAnyOrigin);
        app.MapHealthProbes();
        MapDemo(app);
        return app;
    }

    /// <summary>
    /// Builds the server with <paramref name="build"/> and runs it until it stops. A start that fails for a
    /// reason the operator fixes (the address is taken, a setting is invalid) ends with one line saying
    /// what to do and exit code 1, not a crash with a stack trace and a core dump.
    /// </summary>
    public static async Task<int> RunAsync(Func<WebApplication> build)
    {
        try
        {
            var app = build();
            await app.RunAsync().ConfigureAwait(false);
            return 0;
        }
        catch (IOException failure) when (failure.InnerException is AddressInUseException)
        {
            await Console.Error.WriteLineAsync($"{failure.Message} Another process is listening there (a Laharsub server already running?): stop it, or give this one another address, for example --urls http://localhost:5001.").ConfigureAwait(false);
        }
        catch (OptionsValidationException invalid)
        {
            await Console.Error.WriteLineAsync($"The server did not start: {invalid.Message}").ConfigureAwait(false);
        }
        return 1;
    }

    /// <summary>
    /// A poll names its subscriptions in the query string: about 25 bytes each in the compact form and
    /// 70 in jQuery's indexed form, so Kestrel's 8 KiB request line would refuse polls (414) long
    /// before <c>Laharsub:MaxSubscriptionsPerPoll</c>. Operators' own <c>Kestrel:Limits</c> settings win.
    /// </summary>
    private static void RaiseRequestLineLimit(WebApplicationBuilder builder)
    {
        const int RequestLineBytes = 128 * 1024;
        var limits = builder.Configuration.GetSection("Kestrel:Limits");
        // Kestrel itself reads only endpoints and certificates from its section; binding the section
        // is what makes Kestrel:Limits (and the other options) settable from configuration.
        builder.Services.Configure<KestrelServerOptions>(builder.Configuration.GetSection("Kestrel"));
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            if (limits["MaxRequestLineSize"] is null)
            {
                kestrel.Limits.MaxRequestLineSize = RequestLineBytes;
            }
            if (limits["MaxRequestHeadersTotalSize"] is null)
            {
                kestrel.Limits.MaxRequestHeadersTotalSize = RequestLineBytes + 32 * 1024;
            }
        });
    }

    /// <summary>
    /// The standalone server answers polls and publishes on the connection-level fast path
    /// (<c>Laharsub:FastPath:Enabled</c>, true unless set), with Kestrel's socket transport running its
    /// continuations inline (<c>Kestrel:Sockets:UnsafePreferInlineScheduling</c>, true unless set): each
    /// saves CPU per delivery (docs/performance.md). Inline
    /// scheduling is safe here because nothing in this server blocks a socket thread. The library's own
    /// default stays off: an application that embeds it has middleware the fast path would go around.
    /// <c>Kestrel:Sockets</c> binds the rest of the transport's settings too.
    /// </summary>
    private static void UseFastPathByDefault(WebApplicationBuilder builder)
    {
        var configuration = builder.Configuration;
        builder.Services.Configure<LaharsubOptions>(options =>
        {
            if (configuration[FastPathSetting] is null)
            {
                options.FastPath.Enabled = true;
            }
        });
        builder.Services.Configure<SocketTransportOptions>(configuration.GetSection("Kestrel:Sockets"));
        builder.Services.Configure<SocketTransportOptions>(sockets =>
        {
            if (configuration["Kestrel:Sockets:UnsafePreferInlineScheduling"] is null)
            {
                sockets.UnsafePreferInlineScheduling = true;
            }
        });
    }

    /// <summary>The setting that selects the fast path (true) or the pipeline alone (false).</summary>
    internal const string FastPathSetting = "Laharsub:FastPath:Enabled";

    /// <summary>The setting that switches the demo off: <c>Laharsub:Demo:Enabled=false</c>.</summary>
    internal const string DemoEnabledSetting = "Laharsub:Demo:Enabled";

    /// <summary>
    /// Serves the demo chat page and the jQuery client (copied next to the server's assembly at build
    /// time from <c>src/Clients/JQuery</c>) under <c>/demo/</c>, and sends <c>/</c> there, so that the
    /// page is one click away after starting the server. The redirect keeps the query: the page reads its
    /// settings from it (<c>?token=</c> in Jwt mode, <c>?jquery=3</c>). On unless <see cref="DemoEnabledSetting"/> is false.
    /// </summary>
    private static void MapDemo(WebApplication app)
    {
        var root = Path.Combine(AppContext.BaseDirectory, "demo");
        if (!app.Configuration.GetValue(DemoEnabledSetting, true) || !Directory.Exists(root))
        {
            return;
        }
        var files = new PhysicalFileProvider(root);
        app.UseDefaultFiles(new DefaultFilesOptions { FileProvider = files, RequestPath = "/demo" });
        app.UseStaticFiles(new StaticFileOptions { FileProvider = files, RequestPath = "/demo" });
        app.MapGet("/", (HttpContext context) => Results.Redirect(context.Request.PathBase + "/demo/" + context.Request.QueryString))
            .ExcludeFromDescription();
    }
}
