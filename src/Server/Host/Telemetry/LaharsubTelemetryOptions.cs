using OpenTelemetry.Exporter;

namespace Laharsub.Server.Host.Telemetry;

/// <summary>
/// OpenTelemetry of the standalone server, bound from <c>Laharsub:Telemetry</c>. Off unless an OTLP
/// endpoint is configured (here or in the standard <c>OTEL_EXPORTER_OTLP_ENDPOINT</c>) or the Prometheus
/// scrape endpoint is enabled.
/// </summary>
internal sealed class LaharsubTelemetryOptions
{
    public const string SectionName = "Laharsub:Telemetry";

    /// <summary>The standard variable the OTLP exporter reads by itself.</summary>
    public const string StandardEndpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT";

    /// <summary>Where to send traces, metrics and logs over OTLP.</summary>
    public OtlpSettings Otlp { get; set; } = new();

    /// <summary>The Prometheus scrape endpoint.</summary>
    public PrometheusSettings Prometheus { get; set; } = new();

    internal sealed class OtlpSettings
    {
        /// <summary>The collector, e.g. <c>http://localhost:4317</c> (gRPC) or <c>http://localhost:4318</c> (HTTP); empty = the standard variable decides.</summary>
        public string? Endpoint { get; set; }

        /// <summary><c>Grpc</c> (default) or <c>HttpProtobuf</c>.</summary>
        public OtlpExportProtocol Protocol { get; set; } = OtlpExportProtocol.Grpc;
    }

    internal sealed class PrometheusSettings
    {
        /// <summary>Serves <c>/metrics</c> in Prometheus's text format. Its exporter package is a prerelease, hence opt-in.</summary>
        public bool Enabled { get; set; }
    }
}
