using System.Net;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Limits;

/// <summary>
/// Says in the log that a per-client cap is refusing clients, at most once a minute per cap, so that a
/// flood of refusals is visible without flooding the log.
/// </summary>
internal sealed partial class RefusalLog(string setting, int limit, TimeProvider time, ILogger logger)
{
    private static readonly TimeSpan Interval = TimeSpan.FromMinutes(1);

    private int _refusedSinceLogged;
    private long _nextLogTimestamp = long.MinValue;

    public void Refused(IPAddress client)
    {
        var refused = Interlocked.Increment(ref _refusedSinceLogged);
        var now = time.GetTimestamp();
        var next = Volatile.Read(ref _nextLogTimestamp);
        if (now < next || Interlocked.CompareExchange(ref _nextLogTimestamp, now + (long)(Interval.TotalSeconds * time.TimestampFrequency), next) != next)
        {
            return;
        }
        refused = Interlocked.Exchange(ref _refusedSinceLogged, 0);
        Refusing(logger, setting, limit, ClientAddress.Describe(client), refused);
    }

    [LoggerMessage(EventId = 34, Level = LogLevel.Warning,
        Message = "{Setting} ({Limit}) refused {Refused} requests or connections since this was last logged (at most once a minute), the latest from {Client}.")]
    private static partial void Refusing(ILogger logger, string setting, int limit, string client, int refused);
}
