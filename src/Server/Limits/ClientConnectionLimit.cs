using System.Net;
using System.Threading.RateLimiting;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Limits;

/// <summary>
/// <see cref="ClientLimitOptions.MaxConnectionsPerClient"/>: a Kestrel connection middleware counts each
/// client address's open connections, and an HTTP middleware answers <c>429</c> on one over the cap.
/// </summary>
internal sealed class ClientConnectionLimit : IDisposable
{
    public const string Setting = "Laharsub:Limits:MaxConnectionsPerClient";

    /// <summary>
    /// How long a connection over the cap may wait for its first bytes before it is closed unanswered. A
    /// client that means to make a request sends it at once; one that holds idle connections should not
    /// hold them here.
    /// </summary>
    internal static readonly TimeSpan FirstBytesGrace = TimeSpan.FromSeconds(2);

    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly ClientLimitMetrics _metrics;
    private int _limit;
    private PartitionedRateLimiter<IPAddress>? _connections;
    private RefusalLog? _refusals;

    public ClientConnectionLimit(TimeProvider time, ILogger<ClientConnectionLimit> logger, ClientLimitMetrics metrics)
    {
        _time = time;
        _logger = logger;
        _metrics = metrics;
    }

    /// <summary>The cap in force, once Kestrel's options are configured (<see cref="ConnectionLimitSetup"/>); 0 when off.</summary>
    public int Limit => _limit;

    /// <summary>Sets the cap, which depends on Kestrel's own connection limit; called once, before the server accepts anything.</summary>
    internal void Apply(int limit)
    {
        _limit = limit;
        _connections = PartitionedRateLimiter.Create<IPAddress, IPAddress>(client => RateLimitPartition.GetConcurrencyLimiter(client,
            _ => new ConcurrencyLimiterOptions { PermitLimit = limit, QueueLimit = 0 }));
        _refusals = new RefusalLog(Setting, limit, _time, _logger, _metrics);
    }

    public async Task OnConnectionAsync(ConnectionContext connection, ConnectionDelegate next)
    {
        if (ClientAddress.KeyOf((connection.RemoteEndPoint as IPEndPoint)?.Address) is not { } client)
        {
            await next(connection).ConfigureAwait(false);
            return;
        }
        using var lease = _connections!.AttemptAcquire(client);
        if (lease.IsAcquired)
        {
            await next(connection).ConfigureAwait(false);
            return;
        }
        _refusals!.Refused(client);
        if (!await FirstBytesArriveAsync(connection).ConfigureAwait(false))
        {
            connection.Transport.Input.Complete();
            connection.Transport.Output.Complete();
            return;
        }
        connection.Features.Set(new OverLimit(client));
        await next(connection).ConfigureAwait(false);
    }

    /// <summary>Whether <paramref name="connection"/> was over its client's cap when it connected (its requests are answered 429).</summary>
    internal static bool IsOverLimit(ConnectionContext connection) => connection.Features.Get<OverLimit>() is not null;

    /// <summary>How many connections <paramref name="address"/>'s client holds now.</summary>
    internal long ConnectionsOf(IPAddress address) =>
        ClientAddress.KeyOf(address) is { } client && _connections?.GetStatistics(client) is { } statistics ? _limit - statistics.CurrentAvailablePermits : 0;

    /// <summary>
    /// The HTTP half: the first request on a connection over the cap is answered 429, and the connection
    /// closed. (Features set on a connection are visible from its requests.)
    /// </summary>
    public Task RefuseOverLimitAsync(HttpContext context, RequestDelegate next) =>
        context.Features.Get<OverLimit>() is { } over
            ? new ClientLimitProblem(Setting, _limit, over.Client, "open connections",
                "Reuse connections (keep-alive, HTTP/2) instead of opening more, and close idle ones.", closeConnection: true).ExecuteAsync(context)
            : next(context);

    /// <summary>Waits, within <see cref="FirstBytesGrace"/>, for the client to send something, leaving it unread for Kestrel.</summary>
    private static async Task<bool> FirstBytesArriveAsync(ConnectionContext connection)
    {
        using var grace = CancellationTokenSource.CreateLinkedTokenSource(connection.ConnectionClosed);
        grace.CancelAfter(FirstBytesGrace);
        try
        {
            var read = await connection.Transport.Input.ReadAsync(grace.Token).ConfigureAwait(false);
            // Consuming and examining nothing makes Kestrel's first read return these same bytes at once.
            connection.Transport.Input.AdvanceTo(read.Buffer.Start);
            return !read.Buffer.IsEmpty;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    public void Dispose() => _connections?.Dispose();

    /// <summary>Marks a connection whose client was over the cap when it connected.</summary>
    private sealed record OverLimit(IPAddress Client);
}
