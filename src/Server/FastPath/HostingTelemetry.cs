using System.Diagnostics;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.FastPath;

/// <summary>
/// What ASP.NET Core's hosting layer observes of every request, kept true for the requests the fast path
/// answers: their durations and the active count go into hosting's own instruments
/// (<c>http.server.request.duration</c>, <c>http.server.active_requests</c> of the meter
/// <c>Microsoft.AspNetCore.Hosting</c>), with the tags the pipeline gives them, so dashboards see every
/// request; and while anything traces requests through hosting (its activity source or diagnostic listener),
/// the fast path leaves requests to the pipeline, so that each trace keeps its HTTP server span.
/// </summary>
/// <remarks>
/// The instruments are hosting's own objects, found once by their meter's scope (this application's
/// <see cref="IMeterFactory"/>), not copies made under the same names: an exporter sees one instrument.
/// </remarks>
internal sealed class HostingTelemetry
{
    private const string HostingMeter = "Microsoft.AspNetCore.Hosting";

    private readonly ActivitySource? _hostingSource;
    private readonly DiagnosticListener? _hostingDiagnostics;
    private readonly Histogram<double>? _duration;
    private readonly UpDownCounter<long>? _active;

    public HostingTelemetry(IServiceProvider services)
    {
        // Registered by the web host for its request activities ("Microsoft.AspNetCore").
        _hostingSource = services.GetService<ActivitySource>();
        _hostingDiagnostics = services.GetService<DiagnosticListener>();
        var meters = services.GetService<IMeterFactory>();
        Histogram<double>? found = null;
        UpDownCounter<long>? active = null;
        using (var finder = new MeterListener())
        {
            finder.InstrumentPublished = (instrument, _) =>
            {
                if (instrument.Meter.Name == HostingMeter && ReferenceEquals(instrument.Meter.Scope, meters))
                {
                    found ??= instrument as Histogram<double> is { Name: "http.server.request.duration" } duration ? duration : null;
                    active ??= instrument as UpDownCounter<long> is { Name: "http.server.active_requests" } counter ? counter : null;
                }
            };
            // Start lists the instruments that exist: hosting made its own when the server started.
            finder.Start();
        }
        _duration = found;
        _active = active;
    }

    /// <summary>Whether hosting would make an HTTP server span (or raise diagnostic events) for a request now.</summary>
    public bool Traced => _hostingSource?.HasListeners() == true || _hostingDiagnostics?.IsEnabled() == true;

    /// <summary>A poll taken: counted as active until <see cref="Ended"/>; its start time.</summary>
    public long Started(string method)
    {
        if (_active is { Enabled: true } active)
        {
            active.Add(1, RequestTags(method));
        }
        return Stopwatch.GetTimestamp();
    }

    /// <summary>
    /// A request answered (or its client gone): its duration as hosting records it, and the end of its
    /// active count when <paramref name="counted"/> (a publish is counted only once answered, as the store may
    /// refuse it and the pipeline answer it instead, counting it itself).
    /// </summary>
    public void Ended(string method, string route, int statusCode, long started, bool counted = true)
    {
        if (counted && _active is { Enabled: true } active)
        {
            active.Add(-1, RequestTags(method));
        }
        if (_duration is { Enabled: true } duration)
        {
            var tags = RequestTags(method);
            tags.Add("network.protocol.version", "1.1");
            tags.Add("http.route", route);
            tags.Add("http.response.status_code", statusCode);
            duration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds, tags);
        }
    }

    private static TagList RequestTags(string method) => new()
    {
        { "url.scheme", "http" },
        { "http.request.method", method },
    };
}
