namespace Laharsub.Client.Wire;

/// <summary>Parses one poll response incrementally, one event at a time, in the order the server wrote them.</summary>
internal interface IPollReader : IDisposable
{
    /// <summary>The next message or notice; <see langword="null"/> at the end of the response.</summary>
    /// <exception cref="InvalidDataException">The response is malformed or ends too early.</exception>
    ValueTask<SubscriptionEvent?> ReadAsync(CancellationToken cancellationToken);
}
