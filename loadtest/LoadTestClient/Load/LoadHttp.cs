using System.Net;
using System.Net.Sockets;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// The connections of one process: a single SocketsHttpHandler whose pool of a few connections
/// carries the publishes, the raw poll and stream connections (<see cref="RawPoller"/>,
/// <see cref="RawEventStream"/>, one per simulated client) that it opens and counts, and the
/// WebSockets' handler (<see cref="SocketSubscriber"/>), whose connections it opens and counts too. Connections are spread over
/// several loopback source addresses so that tens of thousands of them do not exhaust one address's
/// ephemeral ports, and every byte is counted on the way in and out.
/// </summary>
internal sealed class LoadHttp : IDisposable
{
    // Linux: let connect() pick the source port per 4-tuple instead of bind() reserving one per address.
    private const int SolIp = 0;
    private const int IpBindAddressNoPort = 24;

    private readonly IPAddress[] _sourceAddresses;
    private readonly SemaphoreSlim _connectGate;
    private int _nextSource;
    private long _bytesSent;
    private long _bytesReceived;
    private int _openConnections;

    public LoadHttp(int maxConnections, int sourceAddressCount, int maxConcurrentConnects = 64)
    {
        _sourceAddresses = Enumerable.Range(0, sourceAddressCount)
            .Select(i => new IPAddress(new byte[] { 127, 0, (byte)((i + 2) / 256), (byte)((i + 2) % 256) }))
            .ToArray();
        // Opening thousands of connections at once overflows the server's accept backlog and shows
        // up as SYN retries (1 s, 3 s, ...) rather than as anything about the server.
        _connectGate = new SemaphoreSlim(maxConcurrentConnects);
        var handler = new SocketsHttpHandler
        {
            MaxConnectionsPerServer = maxConnections,
            PooledConnectionLifetime = Timeout.InfiniteTimeSpan,
            PooledConnectionIdleTimeout = TimeSpan.FromMinutes(5),
            UseProxy = false,
            UseCookies = false,
            AllowAutoRedirect = false,
            AutomaticDecompression = DecompressionMethods.None,
            ConnectTimeout = TimeSpan.FromSeconds(30),
            ConnectCallback = ConnectAsync,
        };
        Client = new HttpClient(handler) { Timeout = Timeout.InfiniteTimeSpan };
        Client.DefaultRequestHeaders.ExpectContinue = false;
        // Each WebSocket takes its connection out of the pool for good once upgraded: no cap, no reuse.
        WebSocketInvoker = new HttpMessageInvoker(new SocketsHttpHandler
        {
            MaxConnectionsPerServer = int.MaxValue,
            UseProxy = false,
            UseCookies = false,
            AllowAutoRedirect = false,
            AutomaticDecompression = DecompressionMethods.None,
            ConnectTimeout = TimeSpan.FromSeconds(30),
            ConnectCallback = ConnectAsync,
        });
    }

    public HttpClient Client { get; }

    /// <summary>Opens the WebSockets (ClientWebSocket.ConnectAsync), on the same source addresses and counted like every other connection.</summary>
    public HttpMessageInvoker WebSocketInvoker { get; }

    public long BytesSent => Volatile.Read(ref _bytesSent);

    public long BytesReceived => Volatile.Read(ref _bytesReceived);

    public int OpenConnections => Volatile.Read(ref _openConnections);

    public void Dispose()
    {
        Client.Dispose();
        WebSocketInvoker.Dispose();
        _connectGate.Dispose();
    }

    /// <summary>
    /// Polls sent on raw connections (<see cref="RawPoller"/>) and not yet answered, or streams open and
    /// subscribed (<see cref="RawEventStream"/>, <see cref="SocketSubscriber"/>); a field for interlocked updates.
    /// </summary>
    internal int PollsWaiting;

    /// <summary>Streams and sockets that opened and subscribed, reconnections included (field for interlocked updates).</summary>
    internal long StreamsOpened;

    /// <summary>
    /// Opens a connection from the next source address, at most a few at a time; counted as open
    /// until <see cref="CountClosed"/>.
    /// </summary>
    public async ValueTask<Socket> OpenSocketAsync(EndPoint server, CancellationToken cancellationToken)
    {
        var source = _sourceAddresses[(int)((uint)Interlocked.Increment(ref _nextSource) % (uint)_sourceAddresses.Length)];
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await _connectGate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (OperatingSystem.IsLinux())
            {
                socket.SetRawSocketOption(SolIp, IpBindAddressNoPort, BitConverter.GetBytes(1));
            }
            socket.Bind(new IPEndPoint(source, 0));
            await socket.ConnectAsync(server, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            socket.Dispose();
            throw;
        }
        finally
        {
            _connectGate.Release();
        }
        Interlocked.Increment(ref _openConnections);
        return socket;
    }

    public void CountSent(int count) => Interlocked.Add(ref _bytesSent, count);

    public void CountReceived(int count) => Interlocked.Add(ref _bytesReceived, count);

    public void CountClosed() => Interlocked.Decrement(ref _openConnections);

    private async ValueTask<Stream> ConnectAsync(SocketsHttpConnectionContext context, CancellationToken cancellationToken) =>
        new CountingStream(new NetworkStream(await OpenSocketAsync(context.DnsEndPoint, cancellationToken).ConfigureAwait(false), ownsSocket: true), this);

    /// <summary>Counts the bytes of one connection into its <see cref="LoadHttp"/>.</summary>
    private sealed class CountingStream(NetworkStream inner, LoadHttp owner) : Stream
    {
        private int _disposed;

        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => true;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override int Read(Span<byte> buffer) => Received(inner.Read(buffer));

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            Received(await inner.ReadAsync(buffer, cancellationToken).ConfigureAwait(false));

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

        public override void Write(ReadOnlySpan<byte> buffer)
        {
            inner.Write(buffer);
            owner.CountSent(buffer.Length);
        }

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            owner.CountSent(buffer.Length);
            return inner.WriteAsync(buffer, cancellationToken);
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override void Flush() => inner.Flush();

        public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing && Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                owner.CountClosed();
                inner.Dispose();
            }
            base.Dispose(disposing);
        }

        private int Received(int count)
        {
            owner.CountReceived(count);
            return count;
        }
    }
}
