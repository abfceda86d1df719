using Laharsub.Server.Host.Admin;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Host.OpenApi;
using Laharsub.Server.Host.Telemetry;
using Laharsub.Server.Host;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;

// Socket completions run on the socket threads rather than being queued to the thread pool (one thread
// hop less per request and per response; docs/performance.md), unless the environment says otherwise.
// Read by the runtime when the first socket is made, so set before anything else runs.
if (Environment.GetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS") is null)
{
    Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS", "1");
}

// "token" prints a development token (see TokenCommand); anything else runs the server.
if (args is ["token", ..])
{
    return TokenCommand.Run(args[1..]);
}
// The store is Redis when Laharsub:Redis:Configuration is set (several instances share topics), in memory otherwise.
return await StandaloneHost.RunAsync(() =>
{
    var app = StandaloneHost.Build(args, builder =>
    {
        builder.Services.AddLaharsub().AddRedisIfConfigured(builder.Configuration);
        builder.Services.AddSystemd();
        builder.AddLaharsubTelemetry();
        builder.Services.AddLaharsubOpenApi();
        builder.AddLaharsubAdmin();
    });
    app.MapLaharsubTelemetry();
    app.MapLaharsubOpenApi();
    app.MapLaharsubAdmin();
    return app;
});
