using System.Net;
using System.Net.Sockets;

namespace Laharsub.Server.Tests.Support;

/// <summary>
/// Clients that come from a chosen loopback address (all of 127.0.0.0/8 is local), so that a test can
/// play several clients that the server tells apart by address.
/// </summary>
public static class Loopback
{
    public static readonly IPAddress Attacker = IPAddress.Parse("127.0.0.1");
    public static readonly IPAddress Neighbour = IPAddress.Parse("127.0.0.2");

    /// <summary>An HttpClient whose connections come from <paramref name="source"/>.</summary>
    public static HttpClient From(IPAddress source, Uri baseAddress, TimeSpan? timeout = null)
    {
        var handler = new SocketsHttpHandler
        {
            ConnectCallback = async (context, cancellationToken) =>
            {
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                try
                {
                    socket.Bind(new IPEndPoint(source, 0));
                    await socket.ConnectAsync(context.DnsEndPoint, cancellationToken);
                    return new NetworkStream(socket, ownsSocket: true);
                }
                catch
                {
                    socket.Dispose();
                    throw;
                }
            },
        };
        return new HttpClient(handler) { BaseAddress = baseAddress, Timeout = timeout ?? WireClient.Bound };
    }

    /// <summary>Opens <paramref name="count"/> TCP connections from <paramref name="source"/> that never send a byte.</summary>
    public static async Task<IdleConnections> OpenIdleAsync(IPAddress source, int port, int count)
    {
        var connections = new IdleConnections();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        // A few at a time: the listen queue is finite, and a server at its limit drains it by closing.
        for (var opened = 0; opened < count; opened += 50)
        {
            var batch = Enumerable.Range(0, Math.Min(50, count - opened)).Select(async _ =>
            {
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                connections.Add(socket);
                socket.Bind(new IPEndPoint(source, 0));
                await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), timeout.Token);
            });
            await Task.WhenAll(batch);
        }
        return connections;
    }

    /// <summary>Idle connections, closed all at once on dispose (the client letting go).</summary>
    public sealed class IdleConnections : IDisposable
    {
        private readonly List<Socket> _sockets = [];

        public int Count
        {
            get { lock (_sockets) { return _sockets.Count; } }
        }

        internal void Add(Socket socket)
        {
            lock (_sockets)
            {
                _sockets.Add(socket);
            }
        }

        /// <summary>
        /// Opens a new connection for each one the server has closed, so that the client holds as many as
        /// it opened: the server may have refused some of them when another client's connection was
        /// counted first (Kestrel counts connections on the thread pool, not in accept order).
        /// </summary>
        public async Task TopUpAsync(IPAddress source, int port)
        {
            List<Socket> closed;
            lock (_sockets)
            {
                // Readable with nothing to read: the peer closed it (these connections are never sent anything).
                closed = _sockets.Where(s => s.Poll(0, SelectMode.SelectRead) && s.Available == 0).ToList();
                foreach (var socket in closed)
                {
                    _sockets.Remove(socket);
                    socket.Dispose();
                }
            }
            if (closed.Count > 0)
            {
                var more = await OpenIdleAsync(source, port, closed.Count);
                lock (more._sockets)
                {
                    foreach (var socket in more._sockets)
                    {
                        Add(socket);
                    }
                    more._sockets.Clear();
                }
            }
        }

        public void Dispose()
        {
            lock (_sockets)
            {
                foreach (var socket in _sockets)
                {
                    socket.Dispose();
                }
                _sockets.Clear();
            }
        }
    }
}
