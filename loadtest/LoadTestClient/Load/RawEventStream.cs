using System.Net;
using System.Net.Sockets;
using System.Text;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>What a <see cref="RawEventStream"/> asks of the client it reads for.</summary>
internal interface IEventStreamHandler
{
    /// <inheritdoc cref="IRawPollHandler.TryWriteQuery"/>
    bool TryWriteQuery(Span<byte> destination, out int written);

    /// <inheritdoc cref="IRawPollHandler.TryWriteHeaders"/>
    bool TryWriteHeaders(Span<byte> destination, out int written);

    /// <summary>
    /// The response's status: 200 starts the stream (and may open it at once, <see cref="StreamSignal.Opened"/>);
    /// any other is counted by the handler, and the stream is asked for again after a pause.
    /// </summary>
    StreamSignal OnHead(int status);

    /// <summary>One event, read off the stream at <paramref name="receivedAt"/> (µs, <see cref="MonotonicClock"/>).</summary>
    StreamSignal OnEvent(in ServerSentEvent sse, long receivedAt);

    /// <summary>The connection broke, the server ended the stream, or it could not be read; the stream reconnects.</summary>
    void OnError(Exception exception);
}

/// <summary>
/// One simulated client's Server-Sent Events stream over a raw HTTP/1.1 connection, read and parsed as
/// it arrives (chunked, as Kestrel sends it, or up to the connection's end, as nginx does) in one
/// buffer, in place: an event costs no allocation, so 19,500 streams keep nothing per event alive.
/// A broken or ended stream is asked for again, the handler writing the request anew (its cursors
/// or last event id): nothing is missed, nothing repeated.
/// </summary>
internal sealed class RawEventStream
{
    private const int InitialReceiveBuffer = 1024;
    private const int InitialQueryRoom = 128;

    private readonly LoadHttp _http;
    private readonly EndPoint _server;
    private readonly byte[] _prefix;
    private readonly byte[] _fixedHeaders;
    private readonly int _maxBytesPerReceive;
    private byte[] _request;
    private byte[] _receive = new byte[InitialReceiveBuffer];
    private byte[] _scratch = new byte[64];
    private int _connects;

    /// <param name="http">Opens the connection (source addresses, connect gate) and counts its bytes.</param>
    /// <param name="streamAddress">Where the stream is asked for, without a query, e.g. <c>http://127.0.0.1:5000/ps/subscriptions</c>.</param>
    /// <param name="maxBytesPerReceive">Caps each socket read; tests use it to split events into tiny reads.</param>
    public RawEventStream(LoadHttp http, Uri streamAddress, int maxBytesPerReceive = int.MaxValue)
    {
        _http = http;
        _server = IPAddress.TryParse(streamAddress.Host, out var address)
            ? new IPEndPoint(address, streamAddress.Port)
            : new DnsEndPoint(streamAddress.Host, streamAddress.Port);
        _prefix = Encoding.ASCII.GetBytes($"GET {streamAddress.AbsolutePath}?");
        _fixedHeaders = Encoding.ASCII.GetBytes($" HTTP/1.1\r\nHost: {streamAddress.Authority}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n");
        _maxBytesPerReceive = maxBytesPerReceive;
        _request = new byte[_prefix.Length + InitialQueryRoom + _fixedHeaders.Length + 2];
        _prefix.CopyTo(_request, 0);
    }

    /// <summary>How many connections this stream has opened (1 while it holds).</summary>
    public int Connects => Volatile.Read(ref _connects);

    /// <summary>Reads the stream until cancelled, reconnecting whenever it breaks.</summary>
    public async Task RunAsync(IEventStreamHandler handler, CancellationToken cancellationToken)
    {
        Socket? socket = null;
        try
        {
            while (!cancellationToken.IsCancellationRequested)
            {
                var open = false;
                try
                {
                    var requestLength = WriteRequest(handler);
                    socket = await _http.OpenSocketAsync(_server, cancellationToken).ConfigureAwait(false);
                    Interlocked.Increment(ref _connects);
                    for (var sent = 0; sent < requestLength;)
                    {
                        sent += await socket.SendAsync(_request.AsMemory(sent, requestLength - sent), SocketFlags.None, cancellationToken).ConfigureAwait(false);
                    }
                    _http.CountSent(requestLength);

                    var filled = 0;
                    int headEnd;
                    while ((headEnd = _receive.AsSpan(0, filled).IndexOf("\r\n\r\n"u8)) < 0)
                    {
                        filled += Received(await socket.ReceiveAsync(ReceiveRoom(filled), SocketFlags.None, cancellationToken).ConfigureAwait(false));
                    }
                    var receivedAt = MonotonicClock.NowMicroseconds;
                    var head = RawPoller.ResponseHead.Parse(_receive.AsSpan(0, headEnd + 2));
                    var signal = handler.OnHead(head.Status);
                    if (head.Status != 200)
                    {
                        // A refusal's body is not needed: a fresh connection asks again after a pause.
                        Close(ref socket);
                        await Task.Delay(100, cancellationToken).ConfigureAwait(false);
                        continue;
                    }
                    if (!_receive.AsSpan(head.ContentTypeStart, head.ContentTypeLength).StartsWith("text/event-stream"u8))
                    {
                        throw new FormatException($"Unreadable stream: a 200 of Content-Type '{Encoding.ASCII.GetString(_receive, head.ContentTypeStart, head.ContentTypeLength)}', not text/event-stream.");
                    }
                    if (signal == StreamSignal.Opened)
                    {
                        open = true;
                        Interlocked.Increment(ref _http.PollsWaiting);
                        Interlocked.Increment(ref _http.StreamsOpened);
                    }
                    var chunked = head.Chunked;
                    var decoder = new ChunkedDecoder();
                    // The body's first bytes came with the head: decoded to the front of the buffer.
                    var bodyStart = headEnd + 4;
                    var decoded = chunked ? decoder.Decode(_receive, 0, bodyStart, filled) : Move(bodyStart, filled, 0);
                    while (true)
                    {
                        var consumed = 0;
                        int length;
                        while ((length = EventStreamParser.TryRead(_receive.AsSpan(consumed, decoded - consumed), ref _scratch, out var sse)) > 0)
                        {
                            consumed += length;
                            signal = handler.OnEvent(sse, receivedAt);
                            if (signal == StreamSignal.Opened && !open)
                            {
                                open = true;
                                Interlocked.Increment(ref _http.PollsWaiting);
                                Interlocked.Increment(ref _http.StreamsOpened);
                            }
                            else if (signal == StreamSignal.Reconnect)
                            {
                                throw new StreamEndedException("The server asked the stream to reconnect.", requested: true);
                            }
                        }
                        decoded = Move(consumed, decoded, 0);
                        if (decoder.Ended)
                        {
                            throw new StreamEndedException("The server ended the stream.");
                        }
                        var count = await socket.ReceiveAsync(ReceiveRoom(decoded), SocketFlags.None, cancellationToken).ConfigureAwait(false);
                        if (count == 0)
                        {
                            throw new StreamEndedException("The server closed the stream's connection.");
                        }
                        _http.CountReceived(count);
                        receivedAt = MonotonicClock.NowMicroseconds;
                        decoded = chunked ? decoder.Decode(_receive, decoded, decoded, decoded + count) : decoded + count;
                    }
                }
                catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
                {
                    return;
                }
                catch (StreamEndedException ended) when (ended.Requested)
                {
                    // A reconnect the server asked for: at once, from the cursors, not an error.
                    Close(ref socket);
                }
                catch (Exception exception) when (exception is SocketException or IOException or FormatException or ObjectDisposedException or System.Text.Json.JsonException)
                {
                    Close(ref socket);
                    handler.OnError(exception);
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
                }
            }
        }
        finally
        {
            Close(ref socket);
        }
    }

    /// <summary>Writes the request into <c>_request</c>: prefix, query, the fixed headers, the handler's headers, the empty line.</summary>
    private int WriteRequest(IEventStreamHandler handler)
    {
        while (true)
        {
            var request = _request.AsSpan();
            var length = _prefix.Length;
            if (handler.TryWriteQuery(request[length..], out var query)
                && _fixedHeaders.AsSpan().TryCopyTo(request[(length += query)..])
                && handler.TryWriteHeaders(request[(length += _fixedHeaders.Length)..], out var headers)
                && "\r\n"u8.TryCopyTo(request[(length += headers)..]))
            {
                return length + 2;
            }
            var larger = new byte[_request.Length * 2];
            _prefix.CopyTo(larger, 0);
            _request = larger;
        }
    }

    /// <summary>Moves <c>_receive[from..to)</c> to <paramref name="at"/>; returns where it ends there.</summary>
    private int Move(int from, int to, int at)
    {
        if (from != at && to > from)
        {
            _receive.AsSpan(from, to - from).CopyTo(_receive.AsSpan(at));
        }
        return at + Math.Max(0, to - from);
    }

    /// <summary>Free space after <paramref name="filled"/> bytes, the buffer doubled when they fill it (an event longer than it).</summary>
    private Memory<byte> ReceiveRoom(int filled)
    {
        if (filled == _receive.Length)
        {
            var larger = new byte[_receive.Length * 2];
            _receive.AsSpan(0, filled).CopyTo(larger);
            _receive = larger;
        }
        return _receive.AsMemory(filled, Math.Min(_receive.Length - filled, _maxBytesPerReceive));
    }

    private int Received(int count)
    {
        if (count == 0)
        {
            throw new IOException("The server closed the connection before the stream's response head was complete.");
        }
        _http.CountReceived(count);
        return count;
    }

    private void Close(ref Socket? socket)
    {
        if (socket is not null)
        {
            socket.Dispose();
            socket = null;
            _http.CountClosed();
        }
    }
}

/// <summary>A stream that ended: asked for by the server (<see cref="Requested"/>), or not.</summary>
internal sealed class StreamEndedException(string message, bool requested = false) : IOException(message)
{
    public bool Requested { get; } = requested;
}
