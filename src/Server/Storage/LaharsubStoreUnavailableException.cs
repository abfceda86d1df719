namespace Laharsub.Server.Storage;

/// <summary>
/// The store's engine cannot be reached or did not answer in time. The server answers such requests
/// with 503, <c>Retry-After</c> and a problem detail that names <see cref="StoreName"/>; nothing was
/// changed unless the store says otherwise.
/// </summary>
public sealed class LaharsubStoreUnavailableException : Exception
{
    /// <summary>Creates the exception.</summary>
    /// <param name="storeName">The engine, as operators know it (for example "Redis").</param>
    /// <param name="message">What failed and what to check.</param>
    /// <param name="innerException">The engine client's error.</param>
    public LaharsubStoreUnavailableException(string storeName, string message, Exception? innerException = null)
        : base(message, innerException) => StoreName = storeName;

    /// <summary>The engine that could not be reached.</summary>
    public string StoreName { get; }

    /// <summary>How long clients should wait before retrying.</summary>
    public TimeSpan RetryAfter { get; init; } = TimeSpan.FromSeconds(1);
}
