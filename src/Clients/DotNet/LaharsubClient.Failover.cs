using System.Net;

namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    /// <summary>Index into <see cref="_addresses"/> of the API root in use; only ever moves forward (wrapping around).</summary>
    private int _currentAddress;

    internal int CurrentAddress => Volatile.Read(ref _currentAddress);

    /// <summary>
    /// Moves on from the address at <paramref name="failed"/> to the next one. Requests that failed on
    /// the same address at the same time move on once between them, not once each: only the first
    /// one's move takes effect, the others find the address already changed.
    /// </summary>
    internal void FailOver(int failed)
    {
        if (_addresses.Length > 1)
        {
            Interlocked.CompareExchange(ref _currentAddress, (failed + 1) % _addresses.Length, failed);
        }
    }

    /// <summary>
    /// Whether a failure means that the instance could not be reached: no connection, a connection cut,
    /// or no answer in time. (A malformed answer or another status is not the instance's absence.)
    /// </summary>
    internal static bool IsUnreachable(Exception exception) =>
        exception is HttpRequestException or IOException or OperationCanceledException;

    /// <summary>The statuses with which a proxy or an instance says that it cannot serve now, while another instance may.</summary>
    private static bool IsUnavailable(HttpStatusCode status) =>
        status is HttpStatusCode.BadGateway or HttpStatusCode.ServiceUnavailable or HttpStatusCode.GatewayTimeout;

    /// <summary>
    /// Whether the next try goes at once to another address: with several addresses, as long as this
    /// run of consecutive failures has not yet been through all of them. Once every address has failed
    /// in a row, the client waits (backoff or <c>Retry-After</c>) as it does with one address.
    /// </summary>
    private bool TriesAnotherAddressAtOnce(int failures) => _addresses.Length > 1 && failures < _addresses.Length;

    /// <summary>The backoff after <paramref name="failures"/> consecutive failures, not counting the immediate tries of other addresses.</summary>
    internal TimeSpan FailoverBackoff(int failures) =>
        TriesAnotherAddressAtOnce(failures) ? TimeSpan.Zero
        : Backoff(_addresses.Length > 1 ? failures - _addresses.Length + 1 : failures);
}
