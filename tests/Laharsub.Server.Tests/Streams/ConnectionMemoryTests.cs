using System.Net.Sockets;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Streams;

/// <summary>
/// What a connection holds on the server, by kind, for a client that reads and one that does not
/// (docs/operations.md, "Memory"; docs/protocol.md, "Streams"): 200 connections each behind 4 MiB of retained 64 KiB
/// messages, the managed heap of the test process (in which the server runs) measured after a full
/// collection. Runs alone, in <see cref="MemoryBoundTests"/>' collection, since other tests would disturb the heap.
/// </summary>
[Collection(nameof(MemoryBoundTests))]
public sealed class ConnectionMemoryTests(Xunit.Abstractions.ITestOutputHelper output)
{
    private const int Connections = 200;
    private const int MessageBytes = 64 * 1024;
    private const int Messages = 64;

    /// <summary>
    /// The bound the docs state for a connection, whether its client reads or not: <c>Streams:MaxBufferedBytes</c>
    /// (64 KiB), the transport's buffer (64 KiB), the message being written twice (its frame or chunk, and the
    /// copy being sent) and 32 KiB for the connection itself. A client that reads gives the buffers back to
    /// Kestrel's pool, which keeps them for the next writes.
    /// </summary>
    private const long Bound = 64 * 1024 + 64 * 1024 + 2 * MessageBytes + 32 * 1024;

    [Theory]
    [InlineData("poll", false)]
    [InlineData("poll", true)]
    [InlineData("sse", false)]
    [InlineData("sse", true)]
    [InlineData("websocket", false)]
    [InlineData("websocket", true)]
    public async Task AConnectionHoldsWithinTheStatedBoundWhetherItsClientReadsOrNot(string transport, bool reading)
    {
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.MaxMessageBytes = MessageBytes;
            o.MaxRetainedBytes = 512L * 1024 * 1024;
            o.MessageTimeToLive = TimeSpan.FromDays(1);
            // The clients that do not read must outlast the measurement rather than be ended as too slow.
            o.Streams.MaxWriteWait = TimeSpan.FromMinutes(10);
        });
        using var client = server.CreateClient(TimeSpan.FromSeconds(60));
        var topic = await client.CreateTopicAsync();
        var body = new byte[MessageBytes];
        Array.Fill(body, (byte)'x');
        for (var i = 0; i < Messages; i++)
        {
            await client.PublishAsync(topic, body, "text/plain");
        }
        // The messages' JSON encodings are made once and kept with them: made now, they are not the connections'.
        for (var from = 1; from <= Messages; from += 8)
        {
            await client.PollAsync($"topics={topic}:{from}&timeout=0");
        }
        var before = GC.GetTotalMemory(forceFullCollection: true);

        var path = $"{server.ApiAddress.AbsolutePath}subscriptions?topics={topic}:1" + (transport == "poll" ? "&timeout=0" : "");
        var head = transport switch
        {
            "sse" => $"GET {path} HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\r\n",
            "poll" => $"GET {path} HTTP/1.1\r\nHost: test\r\n\r\n",
            _ => $"GET {path} HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                 + $"Sec-WebSocket-Key: {Convert.ToBase64String(new byte[16])}\r\nSec-WebSocket-Protocol: laharsub.v1\r\n\r\n",
        };
        // A poll's answer is one batch, which ends its JSON; a stream's is every message, the last one's id ending it.
        var last = transport == "poll" ? "]}" : $"\"messageId\":{Messages}";
        var sockets = new List<Socket>();
        var readers = new List<Task>();
        try
        {
            for (var i = 0; i < Connections; i++)
            {
                // A client that does not read has a small receive buffer, so that the server's writes soon wait on it.
                var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = reading ? 256 * 1024 : 4096 };
                sockets.Add(socket);
                using var connecting = new CancellationTokenSource(WireClient.Bound);
                await socket.ConnectAsync(server.BaseAddress.Host, server.BaseAddress.Port, connecting.Token);
                await socket.SendAsync(Encoding.ASCII.GetBytes(head), connecting.Token);
                if (reading)
                {
                    readers.Add(ReadUntilAsync(socket, last));
                }
            }
            await Task.WhenAll(readers).WaitAsync(TimeSpan.FromSeconds(60));
            var held = await SettledHeapAsync() - before;
            var perConnection = held / Connections;
            output.WriteLine($"{transport}, {(reading ? "reading" : "not reading")}: {Connections} connections hold {held / 1048576.0:0.0} MiB, {perConnection / 1024.0:0.0} KiB each (bound {Bound / 1024} KiB)");
            Assert.True(perConnection <= Bound,
                $"a {transport} connection whose client {(reading ? "reads" : "does not read")} holds {perConnection / 1024.0:0.0} KiB, above the {Bound / 1024} KiB the docs state");
        }
        finally
        {
            foreach (var socket in sockets)
            {
                socket.Dispose();
            }
            await Task.WhenAll(readers).WaitAsync(WireClient.Bound).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
        }
    }

    /// <summary>
    /// The heap once the server has written what it can: measured after full collections until two in a row
    /// agree within 1 % (a client that does not read gives no sign when the server's writes stop).
    /// </summary>
    private static async Task<long> SettledHeapAsync()
    {
        var last = GC.GetTotalMemory(forceFullCollection: true);
        for (var i = 0; i < 20; i++)
        {
            await Task.Delay(250);
            var now = GC.GetTotalMemory(forceFullCollection: true);
            if (Math.Abs(now - last) <= last / 100)
            {
                return Math.Max(now, last);
            }
            last = now;
        }
        return last;
    }

    /// <summary>Reads and drops what the server sends until <paramref name="marker"/> has come.</summary>
    private static async Task ReadUntilAsync(Socket socket, string marker)
    {
        var needle = Encoding.ASCII.GetBytes(marker);
        var buffer = new byte[64 * 1024];
        var tail = Array.Empty<byte>();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        while (true)
        {
            var read = await socket.ReceiveAsync(buffer, timeout.Token);
            Assert.True(read > 0, $"the connection ended before {marker}");
            // The marker may straddle two reads: search it with the previous read's last bytes in front.
            var window = tail.Concat(buffer.Take(read)).ToArray();
            if (window.AsSpan().IndexOf(needle) >= 0)
            {
                return;
            }
            tail = window[Math.Max(0, window.Length - needle.Length)..];
        }
    }
}
