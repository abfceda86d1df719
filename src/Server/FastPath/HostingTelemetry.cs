using System.Diagnostics;
using System.Diagnostics.Metrics;
using Laharsub.Server.Diagnostics;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.FastPath;

/// <summary>
/// What ASP.NET Core's hosting layer observes of every request, kept true for the requests the fast path
/// answers: their durations and the active count go into hosting's own instruments
/// (<c>http.server.request.duration</c>, <c>http.server.active_requests</c> of the meter
/// <c>Microsoft.AspNetCore.Hosting</c>), with the tags the pipeline gives them, so dashboards see every
/// request; and each request's activity (<c>Microsoft.AspNetCore.Hosting.HttpRequestIn</c> on hosting's own
/// activity source) made as hosting makes it: continuing the trace context its headers carry (and its baggage),
/// sampled once by the listeners' sampler with the same tags at creation (the OpenTelemetry HTTP tags, where
/// hosting's switch <c>SuppressActivityOpenTelemetryData</c> is off), so that a traced request keeps its HTTP
/// server span and Laharsub's spans keep it as their parent.
/// </summary>
/// <remarks>
/// The instruments are hosting's own objects, found once by their meter's scope (this application's
/// <see cref="IMeterFactory"/>), not copies made under the same names: an exporter sees one instrument. What
/// this cannot give is the <see cref="HttpContext"/> that hosting's diagnostic listener events carry (what
/// OpenTelemetry's ASP.NET Core instrumentation, with its filters and enrichment callbacks, reads): while that
/// listener has a subscriber, requests are the pipeline's (<see cref="DiagnosticsListened"/>).
/// </remarks>
internal sealed class HostingTelemetry
{
    private const string HostingMeter = "Microsoft.AspNetCore.Hosting";

    /// <summary>Hosting's request activity, as it names it.</summary>
    internal const string ActivityName = "Microsoft.AspNetCore.Hosting.HttpRequestIn";

    private readonly ActivitySource? _hostingSource;
    private readonly DiagnosticListener? _hostingDiagnostics;
    private readonly DistributedContextPropagator _propagator;
    private readonly ILogger _hostingLogger;
    private HostTags? _lastHost;

    /// <summary>
    /// Whether hosting gives its activity the OpenTelemetry HTTP tags: off in .NET 10 unless the
    /// switch <c>Microsoft.AspNetCore.Hosting.SuppressActivityOpenTelemetryData</c> is false; read once, as hosting reads it.
    /// </summary>
    private static readonly bool OpenTelemetryData =
        AppContext.TryGetSwitch("Microsoft.AspNetCore.Hosting.SuppressActivityOpenTelemetryData", out var suppressed) && !suppressed;

    private readonly Histogram<double>? _duration;
    private readonly UpDownCounter<long>? _active;

    public HostingTelemetry(IServiceProvider services)
    {
        // Registered by the web host for its request activities ("Microsoft.AspNetCore"), with the propagator it reads
        // trace context with; hosting's logger is the one whose level decides whether it makes an activity for log scopes.
        _hostingSource = services.GetService<ActivitySource>();
        _hostingDiagnostics = services.GetService<DiagnosticListener>();
        _propagator = services.GetService<DistributedContextPropagator>() ?? DistributedContextPropagator.Current;
        _hostingLogger = services.GetRequiredService<ILoggerFactory>().CreateLogger("Microsoft.AspNetCore.Hosting.Diagnostics");
        TraceFields = [.. _propagator.Fields];
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

    /// <summary>The request headers hosting's propagator reads trace context from (W3C's <c>traceparent</c>, <c>tracestate</c>, <c>baggage</c> by default).</summary>
    public string[] TraceFields { get; }

    /// <summary>
    /// Whether hosting's diagnostic listener has a subscriber now: its events carry the request's <see cref="HttpContext"/>,
    /// which only the pipeline has.
    /// </summary>
    public bool DiagnosticsListened => _hostingDiagnostics?.IsEnabled() == true;

    /// <summary>Whether a request's activities may be recorded now (hosting's or Laharsub's are listened to): its host and user agent are then kept for its activity's tags.</summary>
    public bool Traced => _hostingSource?.HasListeners() == true || LaharsubActivitySource.IsListenedTo;

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
    /// Starts the request's activity as hosting would, current from now on; null when hosting would make none that
    /// anything can see. Hosting also makes an activity no listener sampled while its logging is on (for log
    /// scopes); that one matters here only as the parent of Laharsub's spans and as the carrier of a received
    /// trace context (which a publish keeps with its message), so it is made only for those. The path is
    /// <paramref name="path"/> and <paramref name="pathTail"/>, joined only when an activity is made.
    /// </summary>
    public Activity? StartActivity(string method, string path, string? pathTail, string? host, string? userAgent, TraceHeaders headers)
    {
        var listened = _hostingSource?.HasListeners() == true;
        if (!listened && !(headers.Any || LaharsubActivitySource.IsListenedTo))
        {
            return null;
        }
        var tags = OpenTelemetryData ? CreationTags(method, pathTail is null ? path : string.Concat(path, pathTail), host, userAgent) : null;
        Activity? activity = null;
        string? requestId = null;
        string? traceState = null;
        if (listened)
        {
            _propagator.ExtractTraceIdAndState(headers, TraceHeaders.Getter, out requestId, out traceState);
            // As hosting does: the context overload, so that a W3C parent is marked remote.
            activity = ActivityContext.TryParse(requestId, traceState, isRemote: true, out var context)
                ? _hostingSource!.CreateActivity(ActivityName, ActivityKind.Server, context, tags)
                : _hostingSource!.CreateActivity(ActivityName, ActivityKind.Server, string.IsNullOrEmpty(requestId) ? null : requestId, tags);
        }
        if (activity is null)
        {
            if (!_hostingLogger.IsEnabled(LogLevel.Critical))
            {
                return null;
            }
            _propagator.ExtractTraceIdAndState(headers, TraceHeaders.Getter, out requestId, out traceState);
            activity = new Activity(ActivityName);
            if (!string.IsNullOrEmpty(requestId))
            {
                activity.SetParentId(requestId);
            }
            if (tags is { } added)
            {
                foreach (var tag in added)
                {
                    activity.AddTag(tag.Key, tag.Value);
                }
            }
        }
        if (!string.IsNullOrEmpty(requestId) && !string.IsNullOrEmpty(traceState))
        {
            activity.TraceStateString = traceState;
        }
        if (_propagator.ExtractBaggage(headers, TraceHeaders.Getter) is { } baggage)
        {
            // In the propagator's order, as hosting adds them.
            foreach (var item in baggage)
            {
                activity.AddBaggage(item.Key, item.Value);
            }
        }
        return activity.Start();
    }

    /// <summary>
    /// A request answered (or its client gone): its duration as hosting records it, and the end of its
    /// active count when <paramref name="counted"/> (a publish is counted only once answered, as the store may
    /// refuse it and the pipeline answer it instead, counting it itself); then its activity stopped.
    /// </summary>
    public void Ended(string method, string route, int statusCode, long started, Activity? activity, bool counted = true)
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
            tags.Add("http.response.status_code", BoxedStatus(statusCode));
            duration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds, tags);
        }
        // .NET 10's hosting ends its activity without tags (the route, status code and display name come with .NET 11's).
        activity?.Stop();
    }

    /// <summary>
    /// A request whose activity started and that the pipeline answers after all (a publish the store refused): its
    /// activity is left unstopped, so that no listener records it, as the pipeline makes its own.
    /// </summary>
    public static void Abandon(Activity? activity)
    {
        if (activity is not null)
        {
            Activity.Current = activity.Parent;
        }
    }

    /// <summary>
    /// The tags hosting gives its activity at creation, which a sampler may read: an array of their exact count, which
    /// the activity source enumerates without boxing a <see cref="TagList"/> and its enumerator on every request.
    /// </summary>
    private KeyValuePair<string, object?>[] CreationTags(string method, string path, string? host, string? userAgent)
    {
        HostTags? split = null;
        if (!string.IsNullOrEmpty(host))
        {
            // Clients send one Host: it is split into address and (boxed) port once, not on every request.
            split = _lastHost;
            if (split is null || !string.Equals(split.Header, host, StringComparison.Ordinal))
            {
                var hostString = new HostString(host);
                _lastHost = split = new HostTags(host, hostString.Host, hostString.Port ?? 80);
            }
        }
        var hasAgent = !string.IsNullOrEmpty(userAgent);
        var tags = new KeyValuePair<string, object?>[3 + (split is null ? 0 : 2) + (hasAgent ? 1 : 0)];
        var next = 0;
        if (split is not null)
        {
            tags[next++] = new("server.address", split.Address);
            tags[next++] = new("server.port", split.Port);
        }
        tags[next++] = new("http.request.method", method);
        if (hasAgent)
        {
            tags[next++] = new("user_agent.original", userAgent);
        }
        tags[next++] = new("url.scheme", "http");
        tags[next] = new("url.path", path);
        return tags;
    }

    // The status codes a request ends with, boxed once: a metric's tag takes an object.
    private static readonly object[] StatusCodes = [.. Enumerable.Range(0, 600).Select(code => (object)code)];

    private static object BoxedStatus(int statusCode) => (uint)statusCode < (uint)StatusCodes.Length ? StatusCodes[statusCode] : statusCode;

    private sealed record HostTags(string Header, string Address, object Port);

    private static TagList RequestTags(string method) => new()
    {
        { "url.scheme", "http" },
        { "http.request.method", method },
    };
}
