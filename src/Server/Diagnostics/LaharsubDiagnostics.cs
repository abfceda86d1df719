namespace Laharsub.Server;

/// <summary>
/// The names under which Laharsub reports, for a host that wires its own telemetry, e.g.
/// <c>.WithMetrics(m => m.AddMeter(LaharsubDiagnostics.MeterName))</c> and
/// <c>.WithTracing(t => t.AddSource(LaharsubDiagnostics.ActivitySourceName))</c> with OpenTelemetry.
/// </summary>
public static class LaharsubDiagnostics
{
    /// <summary>
    /// The meter of Laharsub's instruments (<c>laharsub.messages.published</c>, <c>laharsub.polls</c>,
    /// <c>laharsub.delivery.latency</c>, …), created through the host's <see cref="System.Diagnostics.Metrics.IMeterFactory"/>;
    /// <c>dotnet-counters monitor --counters Laharsub.Server</c> reads it too.
    /// </summary>
    public const string MeterName = "Laharsub.Server";

    /// <summary>The activity source of the <c>publish</c> and <c>poll</c> activities, tagged with the OpenTelemetry messaging conventions.</summary>
    public const string ActivitySourceName = "Laharsub.Server";
}
