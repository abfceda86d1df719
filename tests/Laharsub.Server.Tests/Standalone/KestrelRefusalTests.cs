using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// The requests Kestrel refuses while it parses the request line and headers, before any middleware of
/// Laharsub runs: they get the status alone, with no body and <c>Connection: close</c>, since Kestrel
/// offers no hook to shape these answers. docs/protocol.md ("Answers without a body") lists exactly these;
/// if a .NET release starts giving them a body or another status, this test says the list is out of date.
/// </summary>
public sealed class KestrelRefusalTests : IAsyncLifetime
{
    private LaharsubTestServer _server = null!;

    public async Task InitializeAsync() => _server = await LaharsubTestServer.StartAsync();

    public async Task DisposeAsync() => await _server.DisposeAsync();

    public static TheoryData<string, string, int> Requests => new()
    {
        { "no Host", "GET /ps/topics HTTP/1.1\r\n\r\n", 400 },
        { "two Host headers", "GET /ps/topics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400 },
        { "an absolute URI naming another host than Host", "GET http://other/ps/topics HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
        { "NUL in a header value", "GET /ps/topics HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n", 400 },
        { "CR in a header value", "GET /ps/topics HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400 },
        { "a non-ASCII header name", "GET /ps/topics HTTP/1.1\r\nHost: x\r\nX-\u00e9: a\r\n\r\n", 400 },
        { "a space before a header's colon", "GET /ps/topics HTTP/1.1\r\nHost: x\r\nX-A : a\r\n\r\n", 400 },
        { "a character a method may not have", "G(T /ps/topics HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
        { "%00 in the path", "GET /ps/topics/%00 HTTP/1.1\r\nHost: x\r\n\r\n", 400 },
        { "a negative Content-Length", "POST /ps/topics/1 HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400 },
        { "a Content-Length that is not a number", "POST /ps/topics/1 HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400 },
        { "two Content-Lengths", "POST /ps/topics/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400 },
        { "Transfer-Encoding gzip", "POST /ps/topics/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 400 },
        { "Transfer-Encoding with chunked not last", "POST /ps/topics/1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400 },
        { "an HTTP/1.0 POST without Content-Length", "POST /ps/topics/1 HTTP/1.0\r\nHost: x\r\n\r\n", 400 },
        { "a request line over MaxRequestLineSize", $"GET /ps/topics?{new string('a', 200_000)} HTTP/1.1\r\nHost: x\r\n\r\n", 414 },
        { "more headers than MaxRequestHeaderCount", $"GET /ps/topics HTTP/1.1\r\nHost: x\r\n{string.Concat(Enumerable.Range(0, 120).Select(i => $"X-{i}: a\r\n"))}\r\n", 431 },
        { "headers over MaxRequestHeadersTotalSize", $"GET /ps/topics HTTP/1.1\r\nHost: x\r\n{string.Concat(Enumerable.Range(0, 43).Select(i => $"X-{i}: {new string('a', 4000)}\r\n"))}\r\n", 431 },
        { "an HTTP version Kestrel does not speak", "GET /ps/topics HTTP/1.7\r\nHost: x\r\n\r\n", 505 },
    };

    [Theory]
    [MemberData(nameof(Requests))]
    public async Task KestrelRefusesBeforeLaharsubRunsWithTheStatusAloneAndCloses(string what, string request, int status)
    {
        using var timeout = new CancellationTokenSource(WireClient.Bound);

        var response = await RawHttp.ExchangeAsync(_server.BaseAddress, Encoding.UTF8.GetBytes(request), timeout.Token);

        Assert.True(response is not null, $"{what}: the server closed the connection without answering");
        Assert.Equal(status, response.Status);
        Assert.Empty(response.Body);
        Assert.Equal("close", response.Header("Connection"));
    }
}
