using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Laharsub.Client.Tests;

/// <summary>
/// What the client does with a publish sent on a pooled keep-alive connection that the server closed,
/// unread, at the same moment: what a stopping Kestrel does to its idle connections (issue 23, item 7).
/// This pins today's behaviour, which the README's Shutdown section documents: the caller gets the
/// exception and decides. Retrying such a publish safely needs the server to recognise a repeat (a
/// publish id), which does not exist yet; when it does, this test changes to expect the retry.
/// </summary>
public sealed class IdleCloseRaceTests
{
    [Fact]
    public async Task APublishOnAPooledConnectionThatTheServerClosedUnreadIsNotRetriedAndFailsWithItsFateUnknown()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var root = new Uri($"http://127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}/ps/");
        using var http = new HttpClient(new SocketsHttpHandler());
        await using var client = new LaharsubClient(http, [root], TestSupport.Options());

        var first = http.GetAsync(new Uri(root, "health"));
        using var connection = await listener.AcceptSocketAsync().WaitAsync(TestSupport.Timeout);
        await ReadRequestHeadAsync(connection);
        await connection.SendAsync("HTTP/1.1 204 No Content\r\n\r\n"u8.ToArray());
        using (var answered = await first.WaitAsync(TestSupport.Timeout))
        {
            Assert.Equal(HttpStatusCode.NoContent, answered.StatusCode);
        }

        // The publish goes out on the pooled connection; the server closes it with the request unread,
        // as Kestrel does when its idle close crosses the request (the kernel answers the unread bytes with a reset).
        var publish = client.PublishAsync(1, "hello");
        var buffer = new byte[1];
        Assert.Equal(1, await connection.ReceiveAsync(buffer, SocketFlags.Peek).WaitAsync(TestSupport.Timeout));
        connection.Close();

        // Neither HttpClient nor the Laharsub client may know that the server did not process the
        // request (a server that stored it and then died looks the same), so the publish is not retried.
        var error = await Assert.ThrowsAsync<HttpRequestException>(() => publish.WaitAsync(TestSupport.Timeout));
        Assert.NotEqual(HttpRequestError.ConnectionError, error.HttpRequestError);
        Assert.False(listener.Pending(), "no new connection was opened to send the publish again");
    }

    private static async Task ReadRequestHeadAsync(Socket connection)
    {
        var head = new StringBuilder();
        var buffer = new byte[4096];
        while (!head.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
        {
            var read = await connection.ReceiveAsync(buffer).WaitAsync(TestSupport.Timeout);
            Assert.NotEqual(0, read);
            head.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }
    }
}
