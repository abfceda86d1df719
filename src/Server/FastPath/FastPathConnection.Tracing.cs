using System.Diagnostics;
using System.Text;

namespace Laharsub.Server.FastPath;

/// <summary>
/// The request's activity on the connection: what of its head hosting's activity is made from (trace context,
/// host, user agent), and the activity from the request's start to its end (<see cref="HostingTelemetry"/>).
/// Laharsub's own spans start while it is current, so they have it as their parent, as on the pipeline.
/// </summary>
internal sealed partial class FastPathConnection
{
    /// <summary>Whether activities may be recorded now: the request's host and user agent are kept for its activity's tags.</summary>
    private bool _traced;
    private string? _hostHeader;
    private string? _userAgent;

    // The previous request's values: a connection's requests repeat them, so each is made a string once per connection.
    private string? _lastHostHeader;
    private string? _lastUserAgent;

    /// <summary>A publish's topic id as its path has it (the rest of <c>url.path</c>).</summary>
    private string? _topicIdText;

    private TraceHeaders? _traceHeaders;

    /// <summary>The taken request's hosting activity, from its start until it is answered.</summary>
    private Activity? _requestActivity;

    private void ResetTracing()
    {
        _traced = _state.Hosting.Traced;
        _hostHeader = null;
        _userAgent = null;
        _traceHeaders?.Clear();
    }

    /// <summary>Keeps a header's first value for the activity's tags, while activities may be recorded.</summary>
    private void KeepForTrace(ref string? kept, ref string? last, ReadOnlySpan<byte> value)
    {
        if (_traced && kept is null)
        {
            kept = last is not null && Ascii.Equals(value, last) ? last : (last = Encoding.ASCII.GetString(value));
        }
    }

    /// <summary>A header hosting's propagator reads: kept whether or not anything listens, as it is the parent of what the request records.</summary>
    private void KeepTraceHeader(int field, ReadOnlySpan<byte> value)
    {
        if (!(_traceHeaders ??= new TraceHeaders(_state.Hosting.TraceFields)).TryAdd(field, value))
        {
            NotOurs("trace_context");
        }
    }

    /// <summary>Starts the taken request's hosting activity (current from now on in this flow), as the pipeline would at its start.</summary>
    private void StartRequestActivity(string method, string path, string? pathTail = null) =>
        _requestActivity = _state.Hosting.StartActivity(method, path, pathTail, _hostHeader, _userAgent, _traceHeaders ?? TraceHeaders.None);

    /// <summary>The request's activity, to stop as it is answered.</summary>
    private Activity? EndRequestActivity()
    {
        var activity = _requestActivity;
        _requestActivity = null;
        return activity;
    }
}
