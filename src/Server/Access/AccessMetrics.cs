using System.Diagnostics.Metrics;
using Laharsub.Server.Diagnostics;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Access;

/// <summary>
/// Access control's instruments on the <c>Laharsub.Server</c> meter: which mode is on
/// (<c>laharsub.auth.jwt</c>, 1 in Jwt mode, 0 in Open mode) and the requests refused with 401 or 403.
/// </summary>
internal sealed class AccessMetrics
{
    private readonly Counter<long> _refused;

    public AccessMetrics(IMeterFactory meterFactory, IOptions<LaharsubAuthOptions> options)
    {
        var meter = meterFactory.Create(LaharsubMetrics.MeterName);
        var jwt = options.Value.Mode == LaharsubAuthMode.Jwt ? 1 : 0;
        meter.CreateObservableGauge("laharsub.auth.jwt", () => jwt, "{mode}",
            "1 when Laharsub:Auth:Mode is Jwt (tokens are checked), 0 when Open (anyone may do anything).");
        _refused = meter.CreateCounter<long>("laharsub.auth.refused", "{request}",
            "Requests refused by access control, by http.response.status_code (401, 403) and laharsub.operation.");
    }

    public void Refused(int statusCode, LaharsubOperation? operation) => _refused.Add(1,
        new KeyValuePair<string, object?>("http.response.status_code", statusCode),
        new KeyValuePair<string, object?>("laharsub.operation", operation?.Name() ?? "unknown"));
}
