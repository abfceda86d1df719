using System.Diagnostics.Metrics;
using Laharsub.Server.Diagnostics;

namespace Laharsub.Server.Limits;

/// <summary>
/// <c>laharsub.client_limit.refused</c> on the <c>Laharsub.Server</c> meter: requests and connections
/// refused by a per-client cap, by <c>laharsub.limit.setting</c>, so that an operator sees a NAT or a
/// proxy hitting a cap on a dashboard, not only in the log (<see cref="RefusalLog"/>, once a minute).
/// Kestrel counts its own refusals at <c>MaxConcurrentConnections</c> (<c>kestrel.rejected_connections</c>).
/// </summary>
internal sealed class ClientLimitMetrics
{
    private readonly Counter<long> _refused;

    public ClientLimitMetrics(IMeterFactory meterFactory)
    {
        var meter = meterFactory.Create(LaharsubMetrics.MeterName);
        _refused = meter.CreateCounter<long>("laharsub.client_limit.refused", "{request}",
            "Connections and polls refused by a per-client cap (answered 429, or closed unanswered when a connection over the cap sends nothing), by laharsub.limit.setting (Laharsub:Limits:MaxConnectionsPerClient, Laharsub:Limits:MaxWaitingPollsPerClient).");
    }

    public void Refused(string setting) => _refused.Add(1, new KeyValuePair<string, object?>("laharsub.limit.setting", setting));
}
