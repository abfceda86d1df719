using Microsoft.AspNetCore.Http.Metadata;

namespace Laharsub.Server.Endpoints;

/// <summary>
/// Marks an endpoint every answer of which, error or not, has the body it needs, so status code pages
/// have nothing to add: a host can leave such endpoints out of its <c>UseStatusCodePages()</c>, which
/// otherwise makes a feature and an items dictionary for each of their requests, and a state machine for
/// each request that does not finish at once (a held poll's whole wait).
/// </summary>
internal sealed class WritesEveryAnswer : ISkipStatusCodePagesMetadata
{
    public static readonly WritesEveryAnswer Instance = new();

    private WritesEveryAnswer()
    {
    }
}
