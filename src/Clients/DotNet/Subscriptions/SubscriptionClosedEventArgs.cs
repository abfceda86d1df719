namespace Laharsub.Client;

/// <summary>What <see cref="LaharsubSubscription.Closed"/> reports: why an enumeration of the subscription ended.</summary>
public sealed class SubscriptionClosedEventArgs : EventArgs
{
    /// <summary>Creates the event's data.</summary>
    /// <param name="error">The error that ended the enumeration; <see langword="null"/> when it was stopped on purpose.</param>
    public SubscriptionClosedEventArgs(Exception? error)
    {
        Error = error;
    }

    /// <summary>
    /// The error that ended the enumeration, the one <see cref="LaharsubSubscription.ReadAllAsync"/> threw
    /// (a <see cref="LaharsubException"/> for a refusal that a retry cannot fix); <see langword="null"/>
    /// when it was stopped on purpose: disposed, cancelled by its token, or left by the caller.
    /// </summary>
    public Exception? Error { get; }
}
