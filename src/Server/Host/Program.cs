using Laharsub.Server.Host.OpenApi;
using Laharsub.Server.Host.Telemetry;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;

// The store is Redis when Laharsub:Redis:Configuration is set (several instances share topics), in memory otherwise.
var app = StandaloneHost.Build(args, builder =>
{
    builder.Services.AddLaharsub().AddRedisIfConfigured(builder.Configuration);
    builder.AddLaharsubTelemetry();
    builder.Services.AddLaharsubOpenApi();
});
app.MapLaharsubTelemetry();
app.MapLaharsubOpenApi();
await app.RunAsync();
