namespace Laharsub.Server.Endpoints;

/// <summary>
/// Bounds each write of one stream (SSE or WebSocket) by <see cref="LaharsubStreamOptions.MaxWriteWait"/>:
/// a client that stops reading is ended instead of waited for, and resumes from its cursors. One timer per
/// stream, armed for each write and disarmed after it, so that the writes themselves need no cancellation
/// token: a token source and timer per write cost every delivery an allocation, and a cancellable WebSocket
/// send takes the socket's slower path, which registers with the token.
/// </summary>
internal sealed class StreamWriteDeadline : IDisposable
{
    private readonly ITimer _timer;
    private readonly TimeSpan _wait;
    private readonly Action _passed;
    private int _writing;
    private int _expired;

    /// <param name="clock">The host's clock (tests move it).</param>
    /// <param name="wait">How long one write may take.</param>
    /// <param name="passed">Ends the stream (aborts its connection), once, from the timer's thread.</param>
    public StreamWriteDeadline(TimeProvider clock, TimeSpan wait, Action passed)
    {
        _wait = wait;
        _passed = passed;
        _timer = clock.CreateTimer(static self => ((StreamWriteDeadline)self!).Pass(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>Whether a write outlasted the wait and the stream was ended.</summary>
    public bool Passed => Volatile.Read(ref _expired) == 1;

    /// <summary>A write begins.</summary>
    public void Arm()
    {
        Volatile.Write(ref _writing, 1);
        _timer.Change(_wait, Timeout.InfiniteTimeSpan);
    }

    /// <summary>The write is done (or failed).</summary>
    public void Disarm()
    {
        Volatile.Write(ref _writing, 0);
        _timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    private void Pass()
    {
        // A timer that fired as its write completed ends nothing.
        if (Volatile.Read(ref _writing) == 1 && Interlocked.Exchange(ref _expired, 1) == 0)
        {
            _passed();
        }
    }

    public void Dispose() => _timer.Dispose();
}
