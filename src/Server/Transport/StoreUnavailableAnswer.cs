using Laharsub.Server.Storage;

namespace Laharsub.Server.Transport;

/// <summary>
/// The 503 problem of a request that found the store unreachable, the same on every front-end and transport:
/// its title and detail, and <c>Retry-After</c> in whole seconds (at least one).
/// </summary>
internal readonly record struct StoreUnavailableAnswer(string Store, string Title, string Detail, int RetryAfterSeconds)
{
    public static StoreUnavailableAnswer From(LaharsubStoreUnavailableException unavailable)
    {
        var seconds = Math.Max(1, (int)Math.Ceiling(unavailable.RetryAfter.TotalSeconds));
        return new(unavailable.StoreName, $"{unavailable.StoreName} unavailable",
            $"{unavailable.Message} Nothing was changed; retry after {seconds} s.", seconds);
    }
}
