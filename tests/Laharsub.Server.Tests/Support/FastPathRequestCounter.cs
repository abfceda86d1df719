using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Support;

/// <summary>Counts <c>laharsub.fast_path.requests</c> of one server, by its <c>laharsub.request</c> tag, and by that and <c>laharsub.reason</c>.</summary>
public sealed class FastPathRequestCounter : IDisposable
{
    private readonly MeterListener _listener = new();
    private readonly ConcurrentDictionary<string, long> _counts = new();

    public FastPathRequestCounter(IServiceProvider services)
    {
        var meters = services.GetRequiredService<IMeterFactory>();
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Name == "laharsub.fast_path.requests" && ReferenceEquals(instrument.Meter.Scope, meters))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            string? request = null;
            string? reason = null;
            foreach (var tag in tags)
            {
                if (tag.Key == "laharsub.request")
                {
                    request = (string)tag.Value!;
                }
                else if (tag.Key == "laharsub.reason")
                {
                    reason = (string)tag.Value!;
                }
            }
            if (request is not null)
            {
                _counts.AddOrUpdate(request, value, (_, count) => count + value);
                _counts.AddOrUpdate($"{request}/{reason}", value, (_, count) => count + value);
            }
        });
        _listener.Start();
    }

    public long Count(string request) => _counts.GetValueOrDefault(request);

    /// <summary>Requests given to the pipeline (or connections to Kestrel) as <paramref name="request"/> for <paramref name="reason"/>.</summary>
    public long Count(string request, string reason) => _counts.GetValueOrDefault($"{request}/{reason}");

    public void Dispose() => _listener.Dispose();
}
