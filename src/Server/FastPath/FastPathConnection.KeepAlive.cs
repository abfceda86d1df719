using Microsoft.AspNetCore.Connections;

namespace Laharsub.Server.FastPath;

/// <summary>Kestrel's keep-alive and request-head timeouts, kept on its heartbeat, and the shutdown of an idle connection.</summary>
internal sealed partial class FastPathConnection
{
    private void SetDeadline(TimeSpan after) =>
        Volatile.Write(ref _deadline, after == Timeout.InfiniteTimeSpan ? NoDeadline : Environment.TickCount64 + (long)after.TotalMilliseconds);

    private void OnHeartbeat()
    {
        Volatile.Read(ref _kestrelRun)?.Tick();
        if (Environment.TickCount64 <= Volatile.Read(ref _deadline))
        {
            return;
        }
        _deadline = NoDeadline;
        if (_requestStarted)
        {
            _partialRequestTimedOut = true;
            _input.CancelPendingRead();
            return;
        }
        // As Kestrel ends a keep-alive connection that sends nothing: closed without an answer.
        _connection.Abort(new ConnectionAbortedException("No request arrived within Kestrel's keep-alive timeout."));
    }

    private void OnCloseRequested()
    {
        _closeRequested = true;
        if (_idle)
        {
            _input.CancelPendingRead();
        }
    }
}
