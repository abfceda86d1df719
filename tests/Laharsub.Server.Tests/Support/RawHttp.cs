using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Laharsub.Server.Tests.Support;

/// <summary>An answer read off a raw socket: the status line and headers as text, and the body decoded from its framing.</summary>
public sealed record RawResponse(int Status, string Head, byte[] Body)
{
    public string BodyText => Encoding.UTF8.GetString(Body);

    public string? Header(string name)
    {
        foreach (var line in Head.Split("\r\n").Skip(1))
        {
            var colon = line.IndexOf(':');
            if (colon > 0 && line.AsSpan(0, colon).Equals(name, StringComparison.OrdinalIgnoreCase))
            {
                return line[(colon + 1)..].Trim();
            }
        }
        return null;
    }
}

/// <summary>
/// Sends bytes that HttpClient would refuse to send (broken chunked framing, wrong Content-Length, raw
/// query bytes) to the server over a plain TCP connection, and reads back one answer.
/// </summary>
public static class RawHttp
{
    private static readonly byte[] EndOfHead = "\r\n\r\n"u8.ToArray();

    /// <summary>
    /// Connects, writes <paramref name="request"/> and reads one answer, keeping its side of the
    /// connection open (Kestrel treats a half-close as the client leaving, and would answer nothing).
    /// Returns <see langword="null"/> when the server closed or reset the connection without a status line.
    /// </summary>
    public static async Task<RawResponse?> ExchangeAsync(Uri server, ReadOnlyMemory<byte> request, CancellationToken cancellationToken)
    {
        using var socket = await ConnectAsync(server, cancellationToken);
        var received = new List<byte>(1024);
        try
        {
            await socket.SendAsync(request, SocketFlags.None, cancellationToken);
            return await ReadAnswerAsync(socket, received, cancellationToken);
        }
        catch (SocketException) when (IndexOf(received, EndOfHead) < 0)
        {
            return null;
        }
    }

    /// <summary>
    /// Sends <paramref name="head"/> (which asks <c>Expect: 100-continue</c>) without its body and reads the
    /// first answer. Only when that is <c>100 Continue</c> does it send <paramref name="body"/> and read the
    /// final answer, as a client that waits for the go-ahead does. Either answer is <see langword="null"/>
    /// when the server closed the connection instead.
    /// </summary>
    public static async Task<(RawResponse? First, RawResponse? Final)> ExchangeExpectingContinueAsync(
        Uri server, ReadOnlyMemory<byte> head, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        using var socket = await ConnectAsync(server, cancellationToken);
        var received = new List<byte>(1024);
        await socket.SendAsync(head, SocketFlags.None, cancellationToken);
        var first = await ReadAnswerAsync(socket, received, cancellationToken);
        if (first?.Status != 100)
        {
            return (first, null);
        }
        await socket.SendAsync(body, SocketFlags.None, cancellationToken);
        return (first, await ReadAnswerAsync(socket, received, cancellationToken));
    }

    /// <summary>A connection to <paramref name="server"/>, from <paramref name="source"/> when given (a loopback address: <see cref="Loopback"/>).</summary>
    internal static async Task<Socket> ConnectAsync(Uri server, CancellationToken cancellationToken, IPAddress? source = null)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            if (source is not null)
            {
                socket.Bind(new IPEndPoint(source, 0));
            }
            await socket.ConnectAsync(server.Host, server.Port, cancellationToken);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    /// <summary>
    /// Reads one answer off <paramref name="socket"/>, starting with the bytes already in
    /// <paramref name="received"/> and leaving there whatever follows it. An interim (1xx) answer, a 204 and a 304 have no body.
    /// </summary>
    internal static async Task<RawResponse?> ReadAnswerAsync(Socket socket, List<byte> received, CancellationToken cancellationToken)
    {
        var buffer = new byte[16 * 1024];
        int headLength;
        while ((headLength = IndexOf(received, EndOfHead)) < 0)
        {
            var read = await socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
            if (read == 0)
            {
                return null;
            }
            received.AddRange(buffer.AsSpan(0, read));
        }
        var head = Encoding.Latin1.GetString(received.GetRange(0, headLength).ToArray());
        var response = new RawResponse(ParseStatus(head), head, []);
        var body = received.GetRange(headLength + EndOfHead.Length, received.Count - headLength - EndOfHead.Length);
        // The head stays in `received` until the answer is whole: a caller tells a reset before the head from one after it.
        if (response.Status is (>= 100 and < 200) or 204 or 304)
        {
            KeepOnly(received, body);
            return response;
        }
        if (response.Header("Content-Length") is { } lengthText)
        {
            var length = int.Parse(lengthText, System.Globalization.CultureInfo.InvariantCulture);
            while (body.Count < length && await ReceiveAsync(socket, buffer, body, cancellationToken))
            {
            }
            KeepOnly(received, body.Skip(length));
            return response with { Body = [.. body.Take(length)] };
        }
        if (response.Header("Transfer-Encoding") is { } encoding && encoding.Contains("chunked", StringComparison.OrdinalIgnoreCase))
        {
            int chunkedLength;
            while ((chunkedLength = ChunkedLength(body)) < 0 && await ReceiveAsync(socket, buffer, body, cancellationToken))
            {
            }
            // What follows the last chunk is the next answer's (several requests written at once).
            KeepOnly(received, chunkedLength < 0 ? [] : body.Skip(chunkedLength));
            return response with { Body = Dechunk(body) };
        }
        while (await ReceiveAsync(socket, buffer, body, cancellationToken))
        {
        }
        KeepOnly(received, []);
        return response with { Body = [.. body] };
    }

    private static void KeepOnly(List<byte> received, IEnumerable<byte> rest)
    {
        var kept = rest.ToArray();
        received.Clear();
        received.AddRange(kept);
    }

    private static async Task<bool> ReceiveAsync(Socket socket, byte[] buffer, List<byte> into, CancellationToken cancellationToken)
    {
        var read = await socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
        into.AddRange(buffer.AsSpan(0, read));
        return read > 0;
    }

    private static int ParseStatus(string head)
    {
        // "HTTP/1.1 400 Bad Request"
        var parts = head.Split(' ', 3);
        return parts.Length >= 2 && parts[0].StartsWith("HTTP/1.", StringComparison.Ordinal) && int.TryParse(parts[1], out var status)
            ? status
            : throw new InvalidDataException($"Not a status line: '{head.Split("\r\n")[0]}'");
    }

    /// <summary>The length of the chunked body at the start of <paramref name="body"/> (without trailers), or -1 while it is not whole.</summary>
    private static int ChunkedLength(List<byte> body)
    {
        var bytes = body.ToArray();
        var position = 0;
        while (true)
        {
            var lineEnd = Array.IndexOf(bytes, (byte)'\r', position);
            if (lineEnd < 0 || lineEnd + 1 >= bytes.Length)
            {
                return -1;
            }
            if (!int.TryParse(Encoding.ASCII.GetString(bytes, position, lineEnd - position).Split(';')[0], System.Globalization.NumberStyles.HexNumber, null, out var size))
            {
                return -1;
            }
            if (size == 0)
            {
                return lineEnd + 4 <= bytes.Length ? lineEnd + 4 : -1;
            }
            position = lineEnd + 2 + size + 2;
            if (position > bytes.Length)
            {
                return -1;
            }
        }
    }

    private static byte[] Dechunk(List<byte> chunked)
    {
        var data = new List<byte>();
        var bytes = chunked.ToArray();
        var position = 0;
        while (true)
        {
            var lineEnd = Array.IndexOf(bytes, (byte)'\r', position);
            if (lineEnd < 0)
            {
                return [.. data];
            }
            var size = Convert.ToInt32(Encoding.ASCII.GetString(bytes, position, lineEnd - position).Split(';')[0], 16);
            if (size == 0 || lineEnd + 2 + size > bytes.Length)
            {
                return [.. data];
            }
            data.AddRange(bytes.AsSpan(lineEnd + 2, size));
            position = lineEnd + 2 + size + 2;
        }
    }

    internal static int IndexOf(List<byte> haystack, byte[] needle)
    {
        for (var i = 0; i + needle.Length <= haystack.Count; i++)
        {
            var match = true;
            for (var j = 0; j < needle.Length && match; j++)
            {
                match = haystack[i + j] == needle[j];
            }
            if (match)
            {
                return i;
            }
        }
        return -1;
    }

    /// <summary>The request as C# would write it, for failure messages: control characters escaped.</summary>
    public static string Printable(ReadOnlySpan<byte> request)
    {
        var text = new StringBuilder(request.Length);
        foreach (var b in request)
        {
            text.Append(b switch
            {
                (byte)'\r' => "\\r",
                (byte)'\n' => "\\n",
                < 0x20 or >= 0x7f => $"\\x{b:x2}",
                _ => ((char)b).ToString(),
            });
        }
        return text.ToString();
    }
}

/// <summary>One keep-alive connection: requests written as given (several in one write, or one in parts), answers read in order.</summary>
public sealed class RawConnection : IDisposable
{
    private readonly Socket _socket;
    private readonly List<byte> _received = new(1024);

    private RawConnection(Socket socket) => _socket = socket;

    public static async Task<RawConnection> OpenAsync(Uri server, CancellationToken cancellationToken) =>
        new(await RawHttp.ConnectAsync(server, cancellationToken));

    /// <summary>A connection from <paramref name="source"/>, a loopback address (<see cref="Loopback"/>): the client the server counts it for.</summary>
    public static async Task<RawConnection> OpenAsync(Uri server, IPAddress source, CancellationToken cancellationToken) =>
        new(await RawHttp.ConnectAsync(server, cancellationToken, source));

    public async Task SendAsync(string request, CancellationToken cancellationToken) =>
        await _socket.SendAsync(Encoding.ASCII.GetBytes(request), SocketFlags.None, cancellationToken);

    public async Task SendAsync(ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken) =>
        await _socket.SendAsync(bytes, SocketFlags.None, cancellationToken);

    /// <summary>The next answer; null when the server closed the connection before one.</summary>
    public Task<RawResponse?> ReadAnswerAsync(CancellationToken cancellationToken) => RawHttp.ReadAnswerAsync(_socket, _received, cancellationToken);

    /// <summary>
    /// The raw bytes, framing included, up to and including the first <paramref name="marker"/> (a stream's
    /// answer never ends, so it is read up to what the test waits for); the rest stays for the next read.
    /// </summary>
    public async Task<string> ReadThroughAsync(string marker, CancellationToken cancellationToken)
    {
        var end = Encoding.UTF8.GetBytes(marker);
        var buffer = new byte[4096];
        int at;
        while ((at = RawHttp.IndexOf(_received, end)) < 0)
        {
            var read = await _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
            if (read == 0)
            {
                throw new IOException($"the server closed the connection before sending '{marker}'; it sent: {Encoding.UTF8.GetString([.. _received])}");
            }
            _received.AddRange(buffer.AsSpan(0, read));
        }
        var through = at + end.Length;
        var text = Encoding.UTF8.GetString([.. _received[..through]]);
        _received.RemoveRange(0, through);
        return text;
    }

    /// <summary>Completes when the server closes the connection, true if it sent nothing more before.</summary>
    public async Task<bool> ClosedByServerAsync(CancellationToken cancellationToken)
    {
        var buffer = new byte[1024];
        try
        {
            return await _socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken) == 0 && _received.Count == 0;
        }
        catch (SocketException)
        {
            return _received.Count == 0;
        }
    }

    public void Dispose() => _socket.Dispose();
}
