using System.Buffers.Text;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Laharsub.LoadTestClient.Load;

/// <summary>What a <see cref="RawPoller"/> asks of the client it polls for.</summary>
internal interface IRawPollHandler
{
    /// <summary>
    /// Writes the poll's query string (what follows the poll path's <c>?</c>); false when
    /// <paramref name="destination"/> is too small (the poller then grows it and asks again).
    /// </summary>
    bool TryWriteQuery(Span<byte> destination, out int written);

    /// <summary>
    /// Writes request headers of this poll beyond Host and Accept, each line ending in CRLF (nchan's
    /// cursor travels in headers); false when <paramref name="destination"/> is too small.
    /// </summary>
    bool TryWriteHeaders(Span<byte> destination, out int written)
    {
        written = 0;
        return true;
    }

    /// <summary>
    /// A whole response has been read. Returns false when the poller should pause before polling
    /// again (an error status), so that a refusing server does not turn the generator into a busy loop.
    /// </summary>
    bool OnResponse(in RawPollResponse response);

    /// <summary>The connection broke or the response could not be read; the poller reconnects.</summary>
    void OnError(Exception exception);
}

/// <summary>A poll response as read off the socket: valid only during <see cref="IRawPollHandler.OnResponse"/>.</summary>
internal readonly ref struct RawPollResponse(int status, ReadOnlySpan<byte> head, ReadOnlySpan<byte> contentType, ReadOnlySpan<byte> body)
{
    public int Status { get; } = status;

    /// <summary>The status line and header lines, each ending in CRLF.</summary>
    public ReadOnlySpan<byte> Head { get; } = head;

    public ReadOnlySpan<byte> ContentType { get; } = contentType;

    public ReadOnlySpan<byte> Body { get; } = body;

    /// <summary>The value of the first header named <paramref name="name"/> (ASCII, case-insensitive), trimmed of spaces.</summary>
    public bool TryGetHeader(ReadOnlySpan<byte> name, out ReadOnlySpan<byte> value)
    {
        var rest = Head[(Head.IndexOf("\r\n"u8) + 2)..];
        while (rest.Length > 0)
        {
            var end = rest.IndexOf("\r\n"u8);
            var line = end < 0 ? rest : rest[..end];
            if (line.Length > name.Length && line[name.Length] == (byte)':' && Ascii.EqualsIgnoreCase(line[..name.Length], name))
            {
                value = line[(name.Length + 1)..].Trim((byte)' ');
                return true;
            }
            rest = end < 0 ? default : rest[(end + 2)..];
        }
        value = default;
        return false;
    }
}

/// <summary>
/// One simulated client's long poll over a raw HTTP/1.1 keep-alive connection. Everything it needs is
/// allocated once (socket, request buffer, receive buffer, and the one async state machine of
/// <see cref="RunAsync"/>), so thousands of waiting polls keep no per-request objects alive across
/// the generator's garbage collections, as one HttpClient request per poll did (its request, response,
/// headers and async state survived every gen0 collection while the poll waited and paused the
/// generator for ~80 ms each time at 19,500 clients).
/// </summary>
internal sealed class RawPoller
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
    private int _connects;

    /// <param name="http">Opens the connection (source addresses, connect gate) and counts its bytes.</param>
    /// <param name="pollAddress">Where polls go, without a query, e.g. <c>http://127.0.0.1:5000/ps/subscriptions</c>.</param>
    /// <param name="accept">The Accept header: which format the poll asks for.</param>
    /// <param name="maxBytesPerReceive">Caps each socket read; tests use it to split responses into tiny reads.</param>
    public RawPoller(LoadHttp http, Uri pollAddress, string accept, int maxBytesPerReceive = int.MaxValue)
    {
        _http = http;
        _server = IPAddress.TryParse(pollAddress.Host, out var address)
            ? new IPEndPoint(address, pollAddress.Port)
            : new DnsEndPoint(pollAddress.Host, pollAddress.Port);
        _prefix = Encoding.ASCII.GetBytes($"GET {pollAddress.AbsolutePath}?");
        _fixedHeaders = Encoding.ASCII.GetBytes($" HTTP/1.1\r\nHost: {pollAddress.Authority}\r\nAccept: {accept}\r\n");
        _maxBytesPerReceive = maxBytesPerReceive;
        _request = new byte[_prefix.Length + InitialQueryRoom + _fixedHeaders.Length + 2];
        _prefix.CopyTo(_request, 0);
    }

    /// <summary>How many connections this poller has opened (1 while keep-alive holds).</summary>
    public int Connects => Volatile.Read(ref _connects);

    /// <summary>Polls until cancelled: send, read one whole response, hand it over, repeat.</summary>
    public async Task RunAsync(IRawPollHandler handler, CancellationToken cancellationToken)
    {
        Socket? socket = null;
        try
        {
            while (!cancellationToken.IsCancellationRequested)
            {
                var waiting = false;
                try
                {
                    var requestLength = WriteRequest(handler);
                    socket ??= await ConnectAsync(cancellationToken).ConfigureAwait(false);
                    Interlocked.Increment(ref _http.PollsWaiting);
                    waiting = true;
                    for (var sent = 0; sent < requestLength;)
                    {
                        sent += await socket.SendAsync(_request.AsMemory(sent, requestLength - sent), SocketFlags.None, cancellationToken).ConfigureAwait(false);
                    }
                    _http.CountSent(requestLength);

                    var filled = 0;
                    int headEnd;
                    while ((headEnd = _receive.AsSpan(0, filled).IndexOf("\r\n\r\n"u8)) < 0)
                    {
                        filled += Received(await socket.ReceiveAsync(ReceiveRoom(filled, filled + 1), SocketFlags.None, cancellationToken).ConfigureAwait(false));
                    }
                    var head = ResponseHead.Parse(_receive.AsSpan(0, headEnd + 2));
                    var bodyStart = headEnd + 4;
                    var bodyLength = head.Status is 204 or 304 || head.Status < 200 ? 0 : head.ContentLength;
                    var close = head.Close;
                    if (bodyLength < 0)
                    {
                        // Only error answers come without Content-Length (chunked): their body is not
                        // needed, and closing is simpler than decoding chunks to find its end.
                        if (head.Status == 200)
                        {
                            throw new FormatException("Unreadable poll response: a 200 without Content-Length.");
                        }
                        bodyLength = 0;
                        close = true;
                    }
                    else
                    {
                        var end = bodyStart + bodyLength;
                        while (filled < end)
                        {
                            filled += Received(await socket.ReceiveAsync(ReceiveRoom(filled, end), SocketFlags.None, cancellationToken).ConfigureAwait(false));
                        }
                        if (filled > end)
                        {
                            throw new FormatException("Unreadable poll response: more bytes than its Content-Length.");
                        }
                    }
                    Interlocked.Decrement(ref _http.PollsWaiting);
                    waiting = false;
                    if (close)
                    {
                        Close(ref socket);
                    }
                    var carryOn = handler.OnResponse(new RawPollResponse(head.Status, _receive.AsSpan(0, headEnd + 2),
                        _receive.AsSpan(head.ContentTypeStart, head.ContentTypeLength), _receive.AsSpan(bodyStart, bodyLength)));
                    if (!carryOn)
                    {
                        await Task.Delay(100, cancellationToken).ConfigureAwait(false);
                    }
                }
                catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
                {
                    return;
                }
                catch (Exception exception) when (exception is SocketException or IOException or FormatException or ObjectDisposedException
                    or System.Text.Json.JsonException)
                {
                    // Whatever was half read is useless: the next poll starts on a fresh connection.
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
                    if (waiting)
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
    private int WriteRequest(IRawPollHandler handler)
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

    /// <summary>Free space after <paramref name="filled"/> bytes, grown to hold at least <paramref name="needed"/> bytes.</summary>
    private Memory<byte> ReceiveRoom(int filled, int needed)
    {
        if (_receive.Length < needed)
        {
            var larger = new byte[Math.Max(needed, _receive.Length * 2)];
            _receive.AsSpan(0, filled).CopyTo(larger);
            _receive = larger;
        }
        return _receive.AsMemory(filled, Math.Min(_receive.Length - filled, _maxBytesPerReceive));
    }

    private int Received(int count)
    {
        if (count == 0)
        {
            throw new IOException("The server closed the connection before the poll response was complete.");
        }
        _http.CountReceived(count);
        return count;
    }

    private async Task<Socket> ConnectAsync(CancellationToken cancellationToken)
    {
        var socket = await _http.OpenSocketAsync(_server, cancellationToken).ConfigureAwait(false);
        Interlocked.Increment(ref _connects);
        return socket;
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

    /// <summary>The parts of a response head the poller (and <see cref="RawEventStream"/>) needs.</summary>
    internal readonly record struct ResponseHead(int Status, int ContentLength, bool Close, int ContentTypeStart, int ContentTypeLength, bool Chunked = false)
    {
        /// <summary>Parses the status line and headers (<paramref name="head"/> ends with the last header's CRLF).</summary>
        public static ResponseHead Parse(ReadOnlySpan<byte> head)
        {
            var lineEnd = head.IndexOf("\r\n"u8);
            var statusLine = head[..lineEnd];
            if (!statusLine.StartsWith("HTTP/1.1 "u8) || statusLine.Length < 12
                || !Utf8Parser.TryParse(statusLine.Slice(9, 3), out int status, out var consumed) || consumed != 3)
            {
                throw new FormatException("Unreadable response: no HTTP/1.1 status line.");
            }
            int contentLength = -1, contentTypeStart = 0, contentTypeLength = 0;
            var close = false;
            var chunked = false;
            var offset = lineEnd + 2;
            while (offset < head.Length)
            {
                var length = head[offset..].IndexOf("\r\n"u8);
                var line = head.Slice(offset, length);
                var colon = line.IndexOf((byte)':');
                if (colon > 0)
                {
                    var name = line[..colon];
                    var raw = line[(colon + 1)..];
                    var value = raw.Trim((byte)' ');
                    var valueStart = offset + colon + 1 + (raw.Length - raw.TrimStart((byte)' ').Length);
                    if (Ascii.EqualsIgnoreCase(name, "Content-Length"u8))
                    {
                        if (!Utf8Parser.TryParse(value, out contentLength, out consumed) || consumed != value.Length || contentLength < 0)
                        {
                            throw new FormatException("Unreadable response: a bad Content-Length.");
                        }
                    }
                    else if (Ascii.EqualsIgnoreCase(name, "Connection"u8))
                    {
                        close = ContainsIgnoreCase(value, "close"u8);
                    }
                    else if (Ascii.EqualsIgnoreCase(name, "Transfer-Encoding"u8))
                    {
                        chunked = true;
                    }
                    else if (Ascii.EqualsIgnoreCase(name, "Content-Type"u8))
                    {
                        contentTypeStart = valueStart;
                        contentTypeLength = value.Length;
                    }
                }
                offset += length + 2;
            }
            // A chunked body's length is not given: RunAsync closes the connection after it.
            return new ResponseHead(status, chunked ? -1 : contentLength, close, contentTypeStart, contentTypeLength, chunked);
        }

        private static bool ContainsIgnoreCase(ReadOnlySpan<byte> text, ReadOnlySpan<byte> word)
        {
            for (var i = 0; i + word.Length <= text.Length; i++)
            {
                if (Ascii.EqualsIgnoreCase(text.Slice(i, word.Length), word))
                {
                    return true;
                }
            }
            return false;
        }
    }
}
