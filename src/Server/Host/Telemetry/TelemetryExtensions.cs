using Laharsub.Server.Diagnostics;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using OpenTelemetry.Exporter;
using OpenTelemetry.Logs;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using OpenTelemetry.Trace;

namespace Laharsub.Server.Host.Telemetry;

/// <summary>
/// Wires OpenTelemetry from configuration only: the OTLP exporter (traces, metrics and logs) when an endpoint
/// is set, the Prometheus scrape endpoint <c>/metrics</c> when enabled, nothing at all otherwise, so
/// that an unobserved server pays nothing for it.
/// </summary>
internal static class TelemetryExtensions
{
    /// <summary>Where Prometheus scrapes.</summary>
    public const string MetricsPath = "/metrics";

    /// <summary>Meters exported besides Laharsub's own: request durations, connections, GC and thread pool.</summary>
    private static readonly string[] FrameworkMeters = ["Microsoft.AspNetCore.Hosting", "Microsoft.AspNetCore.Server.Kestrel", "System.Runtime"];

    public static WebApplicationBuilder AddLaharsubTelemetry(this WebApplicationBuilder builder)
    {
        builder.Services.AddOptions<LaharsubTelemetryOptions>()
            .BindConfiguration(LaharsubTelemetryOptions.SectionName)
            .Validate(options => options.Otlp.Endpoint is null or "" || IsHttpUrl(options.Otlp.Endpoint),
                "Laharsub:Telemetry:Otlp:Endpoint must be an absolute http:// or https:// URL of an OTLP collector, e.g. http://localhost:4317.")
            .ValidateOnStart();

        // Read here as well because what is exported decides which services exist at all.
        var settings = builder.Configuration.GetSection(LaharsubTelemetryOptions.SectionName).Get<LaharsubTelemetryOptions>() ?? new();
        var otlp = !string.IsNullOrWhiteSpace(settings.Otlp.Endpoint)
            || !string.IsNullOrWhiteSpace(builder.Configuration[LaharsubTelemetryOptions.StandardEndpointVariable]);
        if (!otlp && !settings.Prometheus.Enabled)
        {
            return builder;
        }

        if (IsHttpUrl(settings.Otlp.Endpoint))
        {
            // The Laharsub setting stands for the standard ones, which the exporter reads from
            // configuration by itself (adding /v1/traces, /v1/metrics and /v1/logs for HTTP).
            builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
            {
                [LaharsubTelemetryOptions.StandardEndpointVariable] = settings.Otlp.Endpoint,
                ["OTEL_EXPORTER_OTLP_PROTOCOL"] = settings.Otlp.Protocol == OtlpExportProtocol.HttpProtobuf ? "http/protobuf" : "grpc",
            });
        }
        var telemetry = builder.Services.AddOpenTelemetry();
        if (string.IsNullOrWhiteSpace(builder.Configuration["OTEL_SERVICE_NAME"]))
        {
            telemetry.ConfigureResource(resource => resource.AddService("laharsub"));
        }
        telemetry.WithMetrics(metrics =>
        {
            metrics.AddMeter(LaharsubDiagnostics.MeterName).AddMeter(FrameworkMeters);
            if (otlp)
            {
                metrics.AddOtlpExporter();
            }
            if (settings.Prometheus.Enabled)
            {
                metrics.AddPrometheusExporter();
            }
        });
        if (otlp)
        {
            // Prometheus takes metrics only; traces and logs go where OTLP goes. The logs go as well as to
            // the console, through the same Logging:LogLevel filters; with the formatted message, which a
            // viewer such as the Aspire dashboard shows, beside the template and its values.
            telemetry.WithTracing(tracing => tracing
                .AddSource(LaharsubDiagnostics.ActivitySourceName, "Microsoft.AspNetCore")
                .AddOtlpExporter());
            telemetry.WithLogging(logging => logging.AddOtlpExporter(), options => options.IncludeFormattedMessage = true);
        }
        return builder;
    }

    /// <summary>Maps <c>/metrics</c> when <c>Laharsub:Telemetry:Prometheus:Enabled</c> is true.</summary>
    public static WebApplication MapLaharsubTelemetry(this WebApplication app)
    {
        if (app.Services.GetRequiredService<IOptions<LaharsubTelemetryOptions>>().Value.Prometheus.Enabled)
        {
            // ACCESS CONTROL: in Jwt mode, decide whether scrapes need a token (e.g. RequireAuthorization
            // with an operator policy here) or are left to the network, as Prometheus usually is.
            app.MapPrometheusScrapingEndpoint(MetricsPath);
        }
        return app;
    }

    private static bool IsHttpUrl(string? text) =>
        Uri.TryCreate(text, UriKind.Absolute, out var uri) && (uri.Scheme == Uri.UriSchemeHttp || uri.Scheme == Uri.UriSchemeHttps);
}
