using Laharsub.Server.Host.Admin;
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
    builder.AddLaharsubAdmin();
});
app.MapLaharsubTelemetry();
app.MapLaharsubOpenApi();
app.MapLaharsubAdmin();
await app.RunAsync();
