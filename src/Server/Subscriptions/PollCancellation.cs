namespace Laharsub.Server.Subscriptions;

/// <summary>
/// The one token a waiting poll waits on: it fires when the poll's timeout passes on the host's
/// <see cref="TimeProvider"/> (so tests move it with a fake clock instead of waiting), when the client
/// goes away, or when the server stops. Which of them fired is read from the sources afterwards.
/// </summary>
/// <remarks>
/// A struct rather than a linked source plus <c>CancelAfter</c>: it makes the same objects (one source
/// with its timer, two registrations), and <c>CancelAfter</c> always runs on the system clock.
/// PollTimeoutBenchmarks compares the two.
/// </remarks>
internal readonly struct PollCancellation : IDisposable
{
    private readonly CancellationTokenSource _source;
    private readonly CancellationTokenRegistration _clientGone;
    private readonly CancellationTokenRegistration _stopping;

    private PollCancellation(TimeSpan timeout, TimeProvider timeProvider, CancellationToken clientGone, CancellationToken stopping)
    {
        _source = new CancellationTokenSource(timeout, timeProvider);
        _clientGone = clientGone.UnsafeRegister(static source => ((CancellationTokenSource)source!).Cancel(), _source);
        _stopping = stopping.UnsafeRegister(static source => ((CancellationTokenSource)source!).Cancel(), _source);
    }

    /// <summary>Fires on the first of the three causes.</summary>
    public CancellationToken Token => _source.Token;

    /// <summary>Starts the timeout now and links the client's and the server's tokens.</summary>
    public static PollCancellation Start(TimeSpan timeout, TimeProvider timeProvider, CancellationToken clientGone, CancellationToken stopping) =>
        new(timeout, timeProvider, clientGone, stopping);

    /// <summary>Unlinks first, so that no callback cancels a disposed source.</summary>
    public void Dispose()
    {
        _clientGone.Dispose();
        _stopping.Dispose();
        _source.Dispose();
    }
}
