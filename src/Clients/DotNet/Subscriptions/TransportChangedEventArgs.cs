namespace Laharsub.Client;

/// <summary>What <see cref="LaharsubSubscription.TransportChanged"/> reports: the transport now in use, and why the one before it was given up.</summary>
public sealed class TransportChangedEventArgs : EventArgs
{
    /// <summary>Creates the event's data.</summary>
    /// <param name="transport">The transport now in use.</param>
    /// <param name="reason">Why the transport tried before it was given up; <see langword="null"/> when none was.</param>
    public TransportChangedEventArgs(LaharsubTransport transport, Exception? reason)
    {
        Transport = transport;
        Reason = reason;
    }

    /// <summary>The transport now in use: <see cref="LaharsubTransport.WebSocket"/>, <see cref="LaharsubTransport.ServerSentEvents"/> or <see cref="LaharsubTransport.LongPolling"/>.</summary>
    public LaharsubTransport Transport { get; }

    /// <summary>
    /// Why <see cref="LaharsubTransport.Auto"/> gave up the transport it tried before this one: a
    /// <see cref="LaharsubException"/> with the refusal's status (a proxy's <c>400</c> to an upgrade, a
    /// server's <c>406</c> to an event stream), or a <see cref="TimeoutException"/> for a stream that did
    /// not start in time. <see langword="null"/> for the first transport tried.
    /// </summary>
    public Exception? Reason { get; }
}
