using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Laharsub.Client.Tests;

/// <summary>
/// What the client does with a publish sent on a pooled keep-alive connection that the server closed,
/// unread, at the same moment: what a stopping Kestrel does to its idle connections (issue 23, item 7).
/// With an <c>Idempotency-Key</c> (the default) the server recognises a repeat, so the client sends the
/// publish again with the same key; without one it cannot know whether the publish was stored, and the
/// caller gets the exception and decides.
/// </summary>
public sealed class IdleCloseRaceTests
{
    [Fact]
    public async Task APublishOnAPooledConnectionThatTheServerClosedUnreadIsSentAgainWithTheSameKey()
    {
        await using var race = await PooledConnectionRace.StartAsync(idempotent: true);

        var first = await race.ClosePublishConnectionAsync();
        using var retry = await race.Listener.AcceptSocketAsync().WaitAsync(TestSupport.Timeout);
        var second = await ReadRequestHeadAsync(retry);
        const string json = """{"topicId":1,"messageId":7,"epoch":"0123456789abcdef"}""";
        await retry.SendAsync(Encoding.ASCII.GetBytes($"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: {json.Length}\r\n\r\n{json}"));
        var published = await race.Publish.WaitAsync(TestSupport.Timeout);

        var key = KeyOf(first);
        Assert.False(string.IsNullOrEmpty(key), $"the publish must carry an Idempotency-Key: {first}");
        Assert.Equal(key, KeyOf(second));
        Assert.Equal(7, published.MessageId);
    }

    [Fact]
    public async Task WithoutKeysThePublishIsNotRetriedAndFailsWithItsFateUnknown()
    {
        await using var race = await PooledConnectionRace.StartAsync(idempotent: false);

        var head = await race.ClosePublishConnectionAsync();

        // Neither HttpClient nor the Laharsub client may know that the server did not process the
        // request (a server that stored it and then died looks the same), so the publish is not retried.
        var error = await Assert.ThrowsAsync<HttpRequestException>(() => race.Publish.WaitAsync(TestSupport.Timeout));
        Assert.NotEqual(HttpRequestError.ConnectionError, error.HttpRequestError);
        Assert.False(race.Listener.Pending(), "no new connection was opened to send the publish again");
        Assert.Null(KeyOf(head));
    }

    private static string? KeyOf(string head) => head.Split("\r\n")
        .FirstOrDefault(line => line.StartsWith("Idempotency-Key:", StringComparison.OrdinalIgnoreCase))?["Idempotency-Key:".Length..].Trim();

    private static async Task<string> ReadRequestHeadAsync(Socket connection)
    {
        var head = new StringBuilder();
        var buffer = new byte[4096];
        while (!head.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
        {
            var read = await connection.ReceiveAsync(buffer, SocketFlags.Peek).WaitAsync(TestSupport.Timeout);
            Assert.NotEqual(0, read);
            head.Clear().Append(Encoding.ASCII.GetString(buffer, 0, read));
            if (!head.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
            {
                await Task.Yield();
            }
        }
        return head.ToString();
    }

    /// <summary>A client with one pooled keep-alive connection to a scripted server, and a publish sent on it.</summary>
    private sealed class PooledConnectionRace : IAsyncDisposable
    {
        private readonly HttpClient _http;
        private readonly LaharsubClient _client;
        private readonly Socket _connection;

        private PooledConnectionRace(TcpListener listener, HttpClient http, LaharsubClient client, Socket connection)
        {
            Listener = listener;
            _http = http;
            _client = client;
            _connection = connection;
        }

        public TcpListener Listener { get; }

        public Task<PublishedMessage> Publish { get; private set; } = null!;

        public static async Task<PooledConnectionRace> StartAsync(bool idempotent)
        {
            var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            var root = new Uri($"http://127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}/ps/");
            var http = new HttpClient(new SocketsHttpHandler());
            var options = TestSupport.Options();
            options.IdempotentPublishes = idempotent;
            var client = new LaharsubClient(http, [root], options);
            var first = http.GetAsync(new Uri(root, "health"));
            var connection = await listener.AcceptSocketAsync().WaitAsync(TestSupport.Timeout);
            var buffer = new byte[4096];
            var head = new StringBuilder();
            while (!head.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
            {
                var read = await connection.ReceiveAsync(buffer).WaitAsync(TestSupport.Timeout);
                Assert.NotEqual(0, read);
                head.Append(Encoding.ASCII.GetString(buffer, 0, read));
            }
            await connection.SendAsync("HTTP/1.1 204 No Content\r\n\r\n"u8.ToArray());
            using (var answered = await first.WaitAsync(TestSupport.Timeout))
            {
                Assert.Equal(HttpStatusCode.NoContent, answered.StatusCode);
            }
            return new PooledConnectionRace(listener, http, client, connection);
        }

        /// <summary>
        /// Sends the publish on the pooled connection and closes it with the request unread, as Kestrel does when
        /// its idle close crosses the request (the kernel answers the unread bytes with a reset); returns the request's head.
        /// </summary>
        public async Task<string> ClosePublishConnectionAsync()
        {
            Publish = _client.PublishAsync(1, "hello");
            var head = await ReadRequestHeadAsync(_connection);
            _connection.Close();
            return head;
        }

        public async ValueTask DisposeAsync()
        {
            await _client.DisposeAsync();
            _http.Dispose();
            _connection.Dispose();
            Listener.Stop();
            Listener.Dispose();
        }
    }
}
