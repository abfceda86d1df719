using System.Buffers.Text;
using System.Net;
using System.Net.WebSockets;
using System.Text.Json;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>A publish sent on a socket and not answered yet: its frame id, and what the engine needs to account for it.</summary>
internal readonly record struct PendingPublish(long Sequence, long Started, bool Measured);

/// <summary>What a <see cref="SocketSubscriber"/> asks of the client it reads for.</summary>
internal interface ISocketHandler : IPollResponseSink
{
    /// <summary>A frame arrived at <paramref name="receivedAt"/> (µs); the deliveries it holds follow.</summary>
    void OnReceived(long receivedAt);

    /// <summary>The handshake or a frame was refused with an HTTP status (a problem that answers no publish).</summary>
    void OnStatus(int status);

    /// <summary>The connection broke or a frame could not be read; the socket reconnects.</summary>
    void OnError(Exception exception);

    /// <summary>A publish sent on the socket was stored as <paramref name="messageId"/>.</summary>
    void OnPublishAnswered(in PendingPublish publish, long messageId);

    /// <summary>A publish sent on the socket was refused with <paramref name="status"/>.</summary>
    void OnPublishRefused(in PendingPublish publish, int status);

    /// <summary>A publish was not answered: the socket broke (or was not open) before its answer.</summary>
    void OnPublishLost(in PendingPublish publish);
}

/// <summary>
/// One simulated client's WebSocket (a <see cref="ClientWebSocket"/> on <see cref="LoadHttp.WebSocketInvoker"/>,
/// so on this process's source addresses and counted): reads every frame into one buffer, reconnects
/// from the client's cursors when the socket breaks, and, against Laharsub, publishes on the socket,
/// matching each answer to its publish (the server answers a socket's frames in order).
/// </summary>
internal sealed class SocketSubscriber : IStreamSink, IDisposable
{
    private const int InitialReceiveBuffer = 1024;

    private readonly LoadHttp _http;
    private readonly Uri _address;
    private readonly IWebSocketWire _wire;
    private readonly ISocketHandler _handler;
    private readonly SemaphoreSlim _sending = new(1, 1);
    private readonly Queue<PendingPublish> _pending = new();
    private byte[] _receive = new byte[InitialReceiveBuffer];
    private byte[] _frame = [];
    private ClientWebSocket? _socket;
    private long _sequence;
    private int _connects;

    /// <param name="http">Opens the connection and counts its bytes.</param>
    /// <param name="address">The subscription's address (http://), without a query; the wire adds the cursors.</param>
    /// <param name="wire">The target's side of the socket.</param>
    /// <param name="handler">Receives deliveries and the outcome of every publish.</param>
    public SocketSubscriber(LoadHttp http, Uri address, IWebSocketWire wire, ISocketHandler handler)
    {
        _http = http;
        _address = address;
        _wire = wire;
        _handler = handler;
    }

    /// <summary>How many sockets this subscriber has opened (1 while it holds).</summary>
    public int Connects => Volatile.Read(ref _connects);

    public void Dispose() => _sending.Dispose();

    /// <summary>Holds the socket until cancelled, reconnecting whenever it breaks.</summary>
    public async Task RunAsync(CancellationToken cancellationToken)
    {
        while (!cancellationToken.IsCancellationRequested)
        {
            var open = false;
            var socket = new ClientWebSocket();
            try
            {
                socket.Options.AddSubProtocol(_wire.SubProtocol);
                _wire.SetRequestHeaders(socket.Options);
                // The servers ping; unsolicited pongs from 19,500 clients would only add timers and traffic.
                socket.Options.KeepAliveInterval = TimeSpan.Zero;
                socket.Options.CollectHttpResponseDetails = true;
                try
                {
                    await socket.ConnectAsync(_wire.Address(_address), _http.WebSocketInvoker, cancellationToken).ConfigureAwait(false);
                }
                catch (WebSocketException) when (socket.HttpStatusCode is not 0 and not HttpStatusCode.SwitchingProtocols)
                {
                    _handler.OnStatus((int)socket.HttpStatusCode);
                    await Task.Delay(100, cancellationToken).ConfigureAwait(false);
                    continue;
                }
                Interlocked.Increment(ref _connects);
                // Kept only to read a refusal's status: 19,500 sockets need not hold their handshake's headers.
                socket.HttpResponseHeaders = null;
                if (socket.SubProtocol != _wire.SubProtocol)
                {
                    throw new FormatException($"Unreadable socket: the server chose subprotocol '{socket.SubProtocol}', not {_wire.SubProtocol}.");
                }
                await _sending.WaitAsync(cancellationToken).ConfigureAwait(false);
                _socket = socket;
                _sending.Release();
                if (_wire.OpenAtConnect)
                {
                    open = true;
                    Interlocked.Increment(ref _http.PollsWaiting);
                    Interlocked.Increment(ref _http.StreamsOpened);
                }
                var filled = 0;
                while (true)
                {
                    if (filled == _receive.Length)
                    {
                        var larger = new byte[_receive.Length * 2];
                        _receive.AsSpan(0, filled).CopyTo(larger);
                        _receive = larger;
                    }
                    var received = await socket.ReceiveAsync(_receive.AsMemory(filled), cancellationToken).ConfigureAwait(false);
                    if (received.MessageType == WebSocketMessageType.Close)
                    {
                        throw new StreamEndedException($"The server closed the socket: {(int?)socket.CloseStatus} {socket.CloseStatusDescription}");
                    }
                    filled += received.Count;
                    if (!received.EndOfMessage)
                    {
                        continue;
                    }
                    _handler.OnReceived(MonotonicClock.NowMicroseconds);
                    var signal = _wire.Read(_receive.AsSpan(0, filled), received.MessageType == WebSocketMessageType.Binary, this);
                    filled = 0;
                    if (signal == StreamSignal.Opened && !open)
                    {
                        open = true;
                        Interlocked.Increment(ref _http.PollsWaiting);
                        Interlocked.Increment(ref _http.StreamsOpened);
                    }
                }
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception exception) when (exception is WebSocketException or IOException or FormatException or JsonException or ObjectDisposedException
                or HttpRequestException)
            {
                _handler.OnError(exception);
                try
                {
                    await Task.Delay(100, cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
            finally
            {
                if (open)
                {
                    Interlocked.Decrement(ref _http.PollsWaiting);
                }
                await DetachAsync(socket).ConfigureAwait(false);
            }
        }
    }

    /// <summary>
    /// Sends a frame publishing <paramref name="body"/> to <paramref name="topicId"/>; its answer (or the
    /// socket breaking first) completes <paramref name="publish"/> through the handler. False when the
    /// socket is not open: nothing was sent.
    /// </summary>
    public async ValueTask<bool> PublishAsync(long topicId, ReadOnlyMemory<byte> body, PendingPublish publish)
    {
        await _sending.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_socket is not { State: WebSocketState.Open } socket)
            {
                return false;
            }
            var sequence = ++_sequence;
            int length;
            while (!_wire.TryWritePublish(_frame, sequence, topicId, body.Span, out length))
            {
                _frame = new byte[Math.Max(256, _frame.Length * 2)];
            }
            lock (_pending)
            {
                _pending.Enqueue(publish with { Sequence = sequence });
            }
            try
            {
                await socket.SendAsync(_frame.AsMemory(0, length), WebSocketMessageType.Text, endOfMessage: true, CancellationToken.None).ConfigureAwait(false);
            }
            catch (Exception exception) when (exception is WebSocketException or IOException or ObjectDisposedException)
            {
                // The receive loop sees the broken socket too and fails what is pending, this one included.
                socket.Abort();
            }
            return true;
        }
        finally
        {
            _sending.Release();
        }
    }

    void IPollResponseSink.OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body) => _handler.OnMessage(topicId, messageId, body);

    void IPollResponseSink.OnGap(long topicId, long fromMessageId, long toMessageId) => _handler.OnGap(topicId, fromMessageId, toMessageId);

    void IPollResponseSink.OnReset(long topicId, long firstMessageId, bool epochChanged) => _handler.OnReset(topicId, firstMessageId, epochChanged);

    void IPollResponseSink.OnTopicDeleted(long topicId) => _handler.OnTopicDeleted(topicId);

    void IPollResponseSink.OnEpoch(long topicId, ReadOnlySpan<byte> epoch) => _handler.OnEpoch(topicId, epoch);

    void IStreamSink.OnPublished(ReadOnlySpan<byte> id, long messageId)
    {
        if (TakeAnswered(id) is { } publish)
        {
            _handler.OnPublishAnswered(publish, messageId);
        }
    }

    void IStreamSink.OnRefused(ReadOnlySpan<byte> id, int status)
    {
        if (id.IsEmpty)
        {
            _handler.OnStatus(status);
        }
        else if (TakeAnswered(id) is { } publish)
        {
            _handler.OnPublishRefused(publish, status);
        }
    }

    /// <summary>The oldest publish waiting for its answer, which must be the one <paramref name="id"/> names.</summary>
    private PendingPublish? TakeAnswered(ReadOnlySpan<byte> id)
    {
        PendingPublish publish;
        lock (_pending)
        {
            if (!_pending.TryDequeue(out publish))
            {
                publish = default;
            }
        }
        if (publish.Sequence == 0 || !Utf8Parser.TryParse(id, out long sequence, out var consumed) || consumed != id.Length || sequence != publish.Sequence)
        {
            if (publish.Sequence != 0)
            {
                _handler.OnPublishLost(publish);
            }
            throw new FormatException($"Unreadable socket: an answer to publish '{System.Text.Encoding.UTF8.GetString(id)}' where the next unanswered publish is {publish.Sequence}.");
        }
        return publish;
    }

    /// <summary>Closes the socket for good and fails the publishes it will never answer.</summary>
    private async Task DetachAsync(ClientWebSocket socket)
    {
        // Aborting first ends a send that waits on a server that no longer reads, which frees the lock.
        socket.Abort();
        await _sending.WaitAsync().ConfigureAwait(false);
        if (ReferenceEquals(_socket, socket))
        {
            _socket = null;
        }
        _sending.Release();
        socket.Dispose();
        while (true)
        {
            PendingPublish publish;
            lock (_pending)
            {
                if (!_pending.TryDequeue(out publish))
                {
                    return;
                }
            }
            _handler.OnPublishLost(publish);
        }
    }
}
