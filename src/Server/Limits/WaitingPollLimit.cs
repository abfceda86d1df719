using System.Net;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Limits;

/// <summary>
/// <see cref="ClientLimitOptions.MaxWaitingPollsPerClient"/>: an endpoint filter on the poll that counts
/// each client address's polls in progress and answers <c>429</c> above the cap.
/// </summary>
internal sealed class WaitingPollLimit : IDisposable
{
    public const string Setting = "Laharsub:Limits:MaxWaitingPollsPerClient";

    private readonly int _limit;
    private readonly PartitionedRateLimiter<IPAddress> _polls;
    private readonly RefusalLog _refusals;

    public WaitingPollLimit(IOptions<ClientLimitOptions> options, TimeProvider time, ILogger<WaitingPollLimit> logger, ClientLimitMetrics metrics)
    {
        _limit = options.Value.MaxWaitingPollsPerClient;
        _polls = PartitionedRateLimiter.Create<IPAddress, IPAddress>(client => RateLimitPartition.GetConcurrencyLimiter(client,
            _ => new ConcurrencyLimiterOptions { PermitLimit = Math.Max(_limit, 1), QueueLimit = 0 }));
        _refusals = new RefusalLog(Setting, _limit, time, logger, metrics);
    }

    public bool Enabled => _limit > 0;

    /// <summary>
    /// A permit for one more waiting poll of <paramref name="client"/>, or null over the cap. Not logged: a
    /// caller refused here hands the request to the endpoint's filter, which refuses and logs it.
    /// </summary>
    internal RateLimitLease? TryAcquire(IPAddress client)
    {
        var lease = _polls.AttemptAcquire(client);
        if (lease.IsAcquired)
        {
            return lease;
        }
        lease.Dispose();
        return null;
    }

    public async ValueTask<object?> InvokeAsync(EndpointFilterInvocationContext invocation, EndpointFilterDelegate next)
    {
        if (ClientAddress.KeyOf(invocation.HttpContext.Connection.RemoteIpAddress) is not { } client)
        {
            return await next(invocation).ConfigureAwait(false);
        }
        using var lease = _polls.AttemptAcquire(client);
        if (!lease.IsAcquired)
        {
            _refusals.Refused(client);
            return new ClientLimitProblem(Setting, _limit, client, "waiting polls",
                "One poll can wait on many topics: subscribe to all of a page's topics in one poll instead of one poll each.", closeConnection: false);
        }
        return await next(invocation).ConfigureAwait(false);
    }

    public void Dispose() => _polls.Dispose();
}

/// <summary>Puts <see cref="WaitingPollLimit"/> on the poll endpoint.</summary>
internal static class WaitingPollLimitExtensions
{
    public static RouteHandlerBuilder LimitWaitingPollsPerClient(this RouteHandlerBuilder poll) =>
        poll.AddEndpointFilterFactory((factory, next) =>
        {
            var limit = factory.ApplicationServices.GetRequiredService<WaitingPollLimit>();
            return limit.Enabled ? invocation => limit.InvokeAsync(invocation, next) : next;
        });
}
