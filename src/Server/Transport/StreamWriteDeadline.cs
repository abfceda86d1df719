namespace Laharsub.Server.Transport;

/// <summary>
/// Bounds each write of one stream (SSE or WebSocket) by <see cref="LaharsubStreamOptions.MaxWriteWait"/>:
/// a client that stops reading is ended instead of waited for, and resumes from its cursors. One timer per
/// stream, armed only for a write that did not complete at once (most do), so that the writes themselves need
/// no cancellation token: a token source and timer per write cost every delivery an allocation, and a
/// cancellable WebSocket send takes the socket's slower path, which registers with the token.
/// </summary>
internal sealed class StreamWriteDeadline : IDisposable
{
    private readonly ITimer _timer;
    private readonly TimeSpan _wait;
    private readonly Action _passed;
    private Task? _pending;
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

    /// <summary>Awaits a write that did not complete at once, ending the stream if it is still pending after the wait.</summary>
    public async ValueTask<T> WatchAsync<T>(ValueTask<T> write)
    {
        var pending = write.AsTask();
        Volatile.Write(ref _pending, pending);
        _timer.Change(_wait, Timeout.InfiniteTimeSpan);
        try
        {
            return await pending.ConfigureAwait(false);
        }
        finally
        {
            Volatile.Write(ref _pending, null);
            _timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        }
    }

    /// <inheritdoc cref="WatchAsync{T}(ValueTask{T})"/>
    public async ValueTask WatchAsync(ValueTask write)
    {
        var pending = write.AsTask();
        Volatile.Write(ref _pending, pending);
        _timer.Change(_wait, Timeout.InfiniteTimeSpan);
        try
        {
            await pending.ConfigureAwait(false);
        }
        finally
        {
            Volatile.Write(ref _pending, null);
            _timer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        }
    }

    private void Pass()
    {
        // Only a write still pending ends the stream: a timer that fired as its write completed ends nothing,
        // and a stream whose request is over has no write pending.
        if (Volatile.Read(ref _pending) is { IsCompleted: false } && Interlocked.Exchange(ref _expired, 1) == 0)
        {
            _passed();
        }
    }

    public void Dispose() => _timer.Dispose();
}
