using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

/// <summary>
/// What a stopping instance does to a keep-alive connection that is idle when SIGTERM comes (issue 23,
/// item 7): Kestrel closes it without reading what arrives after, so a publish sent on it is never read,
/// never stored and never answered; the client sees the connection closed (or reset) before any answer.
/// </summary>
public sealed class IdleConnectionShutdownTests
{
    [Fact]
    public async Task OnSigtermAnIdleKeepAliveConnectionIsClosedAndAPublishSentOnItAfterwardsGetsNoAnswer()
    {
        await using var host = await HostProcess.StartAsync();
        long topic;
        using (var http = new HttpClient { BaseAddress = host.ApiAddress })
        using (var created = await http.PostAsync("topics", null).WaitAsync(WireClient.Bound))
        {
            topic = JsonDocument.Parse(await created.Content.ReadAsStringAsync()).RootElement.GetProperty("topicId").GetInt64();
        }
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        await socket.ConnectAsync(host.BaseAddress.Host, host.BaseAddress.Port).WaitAsync(WireClient.Bound);
        await socket.SendAsync(Publish(host, topic, "before")).WaitAsync(WireClient.Bound);
        var answer = await ReadAnswerAsync(socket);
        Assert.StartsWith("HTTP/1.1 201", answer);
        Assert.DoesNotContain("Connection: close", answer, StringComparison.OrdinalIgnoreCase);

        var stopped = host.StopAsync();
        // The server closes the idle connection itself: the client reads its end, no answer comes first.
        Assert.Equal(0, await socket.ReceiveAsync(new byte[256]).WaitAsync(WireClient.Bound));
        var received = await SendAndReceiveAsync(socket, Publish(host, topic, "after"));
        await stopped;

        Assert.Equal(0, received);
    }

    private static byte[] Publish(HostProcess host, long topic, string text) => Encoding.ASCII.GetBytes(
        $"POST {host.ApiAddress.AbsolutePath}topics/{topic} HTTP/1.1\r\nHost: {host.BaseAddress.Authority}\r\n"
        + $"Content-Type: text/plain\r\nContent-Length: {text.Length}\r\n\r\n{text}");

    /// <summary>Bytes of answer received after sending <paramref name="request"/>: none when the connection was closed or reset.</summary>
    private static async Task<int> SendAndReceiveAsync(Socket socket, byte[] request)
    {
        try
        {
            await socket.SendAsync(request).WaitAsync(WireClient.Bound);
            return await socket.ReceiveAsync(new byte[256]).WaitAsync(WireClient.Bound);
        }
        catch (SocketException reset) when (reset.SocketErrorCode is SocketError.ConnectionReset or SocketError.Shutdown or SocketError.ConnectionAborted)
        {
            return 0;
        }
    }

    /// <summary>One whole answer: its head, then as many body bytes as its Content-Length says.</summary>
    private static async Task<string> ReadAnswerAsync(Socket socket)
    {
        var text = new StringBuilder();
        var buffer = new byte[4096];
        while (true)
        {
            var all = text.ToString();
            var end = all.IndexOf("\r\n\r\n", StringComparison.Ordinal);
            if (end >= 0)
            {
                var length = all.Split("\r\n").FirstOrDefault(line => line.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase)) is { } header
                    ? int.Parse(header["Content-Length:".Length..].Trim()) : 0;
                if (all.Length >= end + 4 + length)
                {
                    return all;
                }
            }
            var read = await socket.ReceiveAsync(buffer).WaitAsync(WireClient.Bound);
            Assert.NotEqual(0, read);
            text.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }
    }
}
