namespace Laharsub.Client;

/// <summary>What <see cref="LaharsubSubscription.Retrying"/> reports: why a poll or a stream failed (or ended) and how long the subscription waits before connecting again.</summary>
public sealed class RetryingEventArgs : EventArgs
{
    /// <summary>Creates the event's data.</summary>
    /// <param name="error">Why the poll failed.</param>
    /// <param name="delay">How long the subscription waits before the next poll.</param>
    public RetryingEventArgs(Exception error, TimeSpan delay)
    {
        ArgumentNullException.ThrowIfNull(error);
        Error = error;
        Delay = delay;
    }

    /// <summary>
    /// Why the poll or stream failed: a network error (<see cref="HttpRequestException"/>, <see cref="IOException"/>,
    /// a <see cref="System.Net.WebSockets.WebSocketException"/>), a timeout (a stream that did not start, or fell
    /// silent), a malformed answer, a <see cref="LaharsubException"/> for a 5xx or 429 answer, or an
    /// <see cref="IOException"/> saying that the server ended the stream and asked to reconnect.
    /// </summary>
    public Exception Error { get; }

    /// <summary>How long the subscription waits before polling or connecting again (backoff with jitter, or the server's <c>Retry-After</c>).</summary>
    public TimeSpan Delay { get; }
}
