using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Support;

/// <summary>Counts <c>laharsub.fast_path.requests</c> of one server, by its <c>laharsub.request</c> tag.</summary>
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
            foreach (var tag in tags)
            {
                if (tag.Key == "laharsub.request")
                {
                    _counts.AddOrUpdate((string)tag.Value!, value, (_, count) => count + value);
                }
            }
        });
        _listener.Start();
    }

    public long Count(string request) => _counts.GetValueOrDefault(request);

    public void Dispose() => _listener.Dispose();
}
