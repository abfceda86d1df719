using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Limits;

/// <summary>
/// Stops accepting while as many accepted connections are still open as the process has descriptors
/// for, so that the listen backlog, not the process, holds the rest of a flood.
/// </summary>
/// <remarks>
/// Kestrel's <c>MaxConcurrentConnections</c> closes a connection over the limit after accepting it,
/// and that close runs on the thread pool. On a starved machine (a flood on two busy cores) the
/// closes fall behind the accepts, each waiting connection holds a descriptor, and the process runs out
/// of them: a CI run aborted with "Out of memory." that way at an open-file limit of 1,024. Counting a
/// connection from its accept to its disposal, and not accepting past
/// <c>MaxConcurrentConnections</c> plus a margin for those being refused, bounds the descriptors
/// whatever the thread pool does.
/// </remarks>
internal sealed class PacedConnectionListenerFactory(IConnectionListenerFactory inner, IOptions<KestrelServerOptions> kestrel)
    : IConnectionListenerFactory, IConnectionListenerFactorySelector
{
    /// <summary>Connections that may wait to be refused at once, beyond the limit.</summary>
    internal static int RefusalMargin(long maxConcurrentConnections) => (int)Math.Clamp(maxConcurrentConnections / 20, 16, 256);

    public async ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
    {
        var listener = await inner.BindAsync(endpoint, cancellationToken).ConfigureAwait(false);
        // Read at bind time: the limit is derived when Kestrel's options are configured, before it binds.
        return kestrel.Value.Limits.MaxConcurrentConnections is { } limit
            ? new PacedListener(listener, (int)Math.Min(int.MaxValue / 2, limit) + RefusalMargin(limit))
            : listener;
    }

    public bool CanBind(EndPoint endpoint) => inner is not IConnectionListenerFactorySelector selector || selector.CanBind(endpoint);

    private sealed class PacedListener(IConnectionListener inner, int capacity) : IConnectionListener
    {
        // Never disposed: connections give their places back after the listener is gone (Kestrel unbinds
        // first and drains connections after), and a SemaphoreSlim whose wait handle is never asked for
        // holds nothing to free.
        private readonly SemaphoreSlim _open = new(capacity, capacity);

        // Kestrel's accept loop ends when AcceptAsync returns null after an unbind; one waiting for a
        // place must end too, or shutdown waits for a connection to close.
        private readonly CancellationTokenSource _unbound = new();

        public EndPoint EndPoint => inner.EndPoint;

        public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
        {
            try
            {
                if (cancellationToken.CanBeCanceled)
                {
                    using var either = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _unbound.Token);
                    await _open.WaitAsync(either.Token).ConfigureAwait(false);
                }
                else
                {
                    await _open.WaitAsync(_unbound.Token).ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException) when (_unbound.IsCancellationRequested)
            {
                return null;
            }
            ConnectionContext? connection;
            try
            {
                connection = await inner.AcceptAsync(cancellationToken).ConfigureAwait(false);
            }
            catch
            {
                _open.Release();
                throw;
            }
            if (connection is null)
            {
                _open.Release();
                return null;
            }
            return new CountedConnection(connection, _open);
        }

        public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
        {
            _unbound.Cancel();
            return inner.UnbindAsync(cancellationToken);
        }

        public async ValueTask DisposeAsync()
        {
            await _unbound.CancelAsync().ConfigureAwait(false);
            await inner.DisposeAsync().ConfigureAwait(false);
            _unbound.Dispose();
        }
    }

    /// <summary>The transport's connection, as it is, releasing its place when Kestrel disposes of it.</summary>
    private sealed class CountedConnection(ConnectionContext inner, SemaphoreSlim open) : ConnectionContext
    {
        private int _released;

        public override string ConnectionId { get => inner.ConnectionId; set => inner.ConnectionId = value; }
        public override IFeatureCollection Features => inner.Features;
        public override IDictionary<object, object?> Items { get => inner.Items; set => inner.Items = value; }
        public override IDuplexPipe Transport { get => inner.Transport; set => inner.Transport = value; }
        public override CancellationToken ConnectionClosed { get => inner.ConnectionClosed; set => inner.ConnectionClosed = value; }
        public override EndPoint? LocalEndPoint { get => inner.LocalEndPoint; set => inner.LocalEndPoint = value; }
        public override EndPoint? RemoteEndPoint { get => inner.RemoteEndPoint; set => inner.RemoteEndPoint = value; }

        public override void Abort(ConnectionAbortedException abortReason) => inner.Abort(abortReason);

        public override void Abort() => inner.Abort();

        public override async ValueTask DisposeAsync()
        {
            try
            {
                await inner.DisposeAsync().ConfigureAwait(false);
                await base.DisposeAsync().ConfigureAwait(false);
            }
            finally
            {
                if (Interlocked.Exchange(ref _released, 1) == 0)
                {
                    open.Release();
                }
            }
        }
    }
}
