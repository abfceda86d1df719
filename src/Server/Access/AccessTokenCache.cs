using System.Security.Claims;
using Microsoft.Extensions.Caching.Memory;

namespace Laharsub.Server.Access;

/// <summary>
/// Tokens already validated, so that a client's every poll does not pay for signature checking and
/// claim parsing again. An entry lives until the token's <c>exp</c> (validation is repeated after it,
/// with the clock skew) and is dropped after 10 idle minutes; the cache holds at most
/// <see cref="MaxEntries"/> tokens, dropping the least recently used first.
/// </summary>
internal sealed class AccessTokenCache : IDisposable
{
    public const int MaxEntries = 10_000;

    private static readonly TimeSpan IdleLifetime = TimeSpan.FromMinutes(10);

    private readonly MemoryCache _cache = new(new MemoryCacheOptions { SizeLimit = MaxEntries, CompactionPercentage = 0.1 });

    public bool TryGet(string token, out ClaimsPrincipal? principal) => _cache.TryGetValue(token, out principal);

    public void Add(string token, ClaimsPrincipal principal, DateTimeOffset expires)
    {
        using var entry = _cache.CreateEntry(token);
        entry.Value = principal;
        entry.Size = 1;
        entry.AbsoluteExpiration = expires;
        entry.SlidingExpiration = IdleLifetime;
    }

    public void Dispose() => _cache.Dispose();
}
