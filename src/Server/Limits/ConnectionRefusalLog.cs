using System.Diagnostics.Metrics;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Limits;

/// <summary>
/// Says in the log, at most once a minute, how many connections Kestrel refused at
/// <c>Kestrel:Limits:MaxConcurrentConnections</c>, from Kestrel's own counter of them. Kestrel logs a
/// warning per refused connection, which a flood turns into thousands of lines; the standalone host
/// turns that one off.
/// </summary>
internal sealed class ConnectionRefusalLog(IMeterFactory meters, IOptions<KestrelServerOptions> kestrel, TimeProvider time, ILogger<ConnectionRefusalLog> logger)
    : IHostedService, IDisposable
{
    /// <summary>The category of Kestrel's line per refused connection (its only one at Warning or above).</summary>
    public const string KestrelConnectionsCategory = "Microsoft.AspNetCore.Server.Kestrel.Connections";

    private MeterListener? _listener;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        if (kestrel.Value.Limits.MaxConcurrentConnections is not { } limit)
        {
            return Task.CompletedTask;
        }
        var refusals = new RefusalLog(ConnectionLimitSetup.Setting, (int)Math.Min(int.MaxValue, limit), time, logger);
        _listener = new MeterListener
        {
            // This host's Kestrel only: its meter comes from this host's meter factory.
            InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Scope == meters && instrument is { Name: "kestrel.rejected_connections", Meter.Name: "Microsoft.AspNetCore.Server.Kestrel" })
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            },
        };
        _listener.SetMeasurementEventCallback<long>((_, count, _, _) => refusals.Refused((int)count));
        _listener.Start();
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public void Dispose() => _listener?.Dispose();
}
