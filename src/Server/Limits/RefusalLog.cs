using System.Net;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Limits;

/// <summary>
/// Says in the log that a per-client cap is refusing clients, at most once a minute per cap, so that a
/// flood of refusals is visible without flooding the log; each refusal of a client is also counted in
/// <paramref name="metrics"/>, when given.
/// </summary>
internal sealed partial class RefusalLog(string setting, int limit, TimeProvider time, ILogger logger, ClientLimitMetrics? metrics = null)
{
    private static readonly TimeSpan Interval = TimeSpan.FromMinutes(1);

    private int _refusedSinceLogged;
    private long _nextLogTimestamp = long.MinValue;

    public void Refused(IPAddress client)
    {
        metrics?.Refused(setting);
        if (TakeTurn(1) is { } refused)
        {
            Refusing(logger, setting, limit, ClientAddress.Describe(client), refused);
        }
    }

    /// <summary>Refusals counted by someone who does not say whom they refused (Kestrel's connection limit).</summary>
    public void Refused(int count)
    {
        if (TakeTurn(count) is { } refused)
        {
            RefusingConnections(logger, setting, limit, refused);
        }
    }

    /// <summary>Counts the refusals; returns how many since the last line when it is time for one.</summary>
    private int? TakeTurn(int count)
    {
        Interlocked.Add(ref _refusedSinceLogged, count);
        var now = time.GetTimestamp();
        var next = Volatile.Read(ref _nextLogTimestamp);
        if (now < next || Interlocked.CompareExchange(ref _nextLogTimestamp, now + (long)(Interval.TotalSeconds * time.TimestampFrequency), next) != next)
        {
            return null;
        }
        return Interlocked.Exchange(ref _refusedSinceLogged, 0);
    }
}
