namespace Laharsub.Client;

/// <summary>What <see cref="LaharsubSubscription.Retrying"/> reports: why a poll failed and how long the subscription waits before polling again.</summary>
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
    /// Why the poll failed: a network error (<see cref="HttpRequestException"/>), a timeout, a malformed
    /// answer, or a <see cref="LaharsubException"/> for a 5xx or 429 answer.
    /// </summary>
    public Exception Error { get; }

    /// <summary>How long the subscription waits before polling again (backoff with jitter, or the server's <c>Retry-After</c>).</summary>
    public TimeSpan Delay { get; }
}
