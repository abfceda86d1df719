using System.Net;
using System.Net.Http.Json;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// HTTP/2 as the README configures it for production: Kestrel on TLS (HTTP/1.1 and HTTP/2 negotiated by
/// ALPN), so that a browser's streams and polls share one connection instead of six per origin; and
/// prior-knowledge h2c for proxies that speak it.
/// </summary>
public sealed class Http2Tests : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);
    private readonly string _certificatePath = Path.Combine(Path.GetTempPath(), $"laharsub-h2-{Guid.NewGuid():N}.pfx");
    private readonly string _thumbprint;

    public Http2Tests()
    {
        using var key = RSA.Create(2048);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
        File.WriteAllBytes(_certificatePath, certificate.Export(X509ContentType.Pfx, "test"));
        _thumbprint = certificate.Thumbprint;
    }

    public void Dispose() => File.Delete(_certificatePath);

    /// <summary>Trusts exactly the certificate this test made, as a client that pins it would.</summary>
    private bool IsTheTestCertificate(object sender, X509Certificate? certificate, X509Chain? chain, System.Net.Security.SslPolicyErrors errors) =>
        certificate is not null && string.Equals(certificate.GetCertHashString(), _thumbprint, StringComparison.OrdinalIgnoreCase);

    [Fact]
    public async Task TenStreamsShareOneTlsConnectionOverHttp2()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Kestrel:Endpoints:Https:Url"] = "https://127.0.0.1:0",
            ["Kestrel:Endpoints:Https:Certificate:Path"] = _certificatePath,
            ["Kestrel:Endpoints:Https:Certificate:Password"] = "test",
        });
        Assert.Equal("https", server.BaseAddress.Scheme);
        var connections = 0;
        using var handler = new SocketsHttpHandler
        {
            SslOptions = { RemoteCertificateValidationCallback = IsTheTestCertificate },
            ConnectCallback = async (context, cancellationToken) =>
            {
                Interlocked.Increment(ref connections);
                var socket = new System.Net.Sockets.Socket(System.Net.Sockets.SocketType.Stream, System.Net.Sockets.ProtocolType.Tcp);
                await socket.ConnectAsync(context.DnsEndPoint, cancellationToken);
                return new System.Net.Sockets.NetworkStream(socket, ownsSocket: true);
            },
        };
        using var client = new HttpClient(handler)
        {
            BaseAddress = server.ApiAddress,
            DefaultRequestVersion = HttpVersion.Version20,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Timeout = Bound,
        };
        using var created = await client.PostAsync("topics", null).WaitAsync(Bound);
        var topic = (await created.Content.ReadFromJsonAsync<Dictionary<string, object>>())!["topicId"].ToString();

        var streams = new List<(HttpResponseMessage Response, StreamReader Reader)>();
        try
        {
            for (var i = 0; i < 10; i++)
            {
                using var request = new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}")
                {
                    Version = HttpVersion.Version20,
                    VersionPolicy = HttpVersionPolicy.RequestVersionExact,
                };
                request.Headers.Accept.ParseAdd("text/event-stream");
                var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead).WaitAsync(Bound);
                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                Assert.Equal(HttpVersion.Version20, response.Version);
                streams.Add((response, new StreamReader(await response.Content.ReadAsStreamAsync())));
            }
            foreach (var (_, reader) in streams)
            {
                await ReadUntilAsync(reader, "event: subscribed");
            }
            using var published = await client.PostAsync($"topics/{topic}", new StringContent("over h2")).WaitAsync(Bound);
            Assert.Equal(HttpStatusCode.Created, published.StatusCode);
            foreach (var (_, reader) in streams)
            {
                Assert.Contains("\"body\":\"over h2\"", await ReadUntilAsync(reader, "data: {\"topicId\""));
            }
            // Ten streams and three requests, one TLS connection: HTTP/1.1 would have needed a connection each.
            Assert.Equal(1, connections);
        }
        finally
        {
            foreach (var (response, reader) in streams)
            {
                reader.Dispose();
                response.Dispose();
            }
        }
    }

    [Fact]
    public async Task AWebSocketRunsOverHttp2()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Kestrel:Endpoints:Https:Url"] = "https://127.0.0.1:0",
            ["Kestrel:Endpoints:Https:Certificate:Path"] = _certificatePath,
            ["Kestrel:Endpoints:Https:Certificate:Password"] = "test",
        });
        using var handler = new SocketsHttpHandler { SslOptions = { RemoteCertificateValidationCallback = IsTheTestCertificate } };
        using var invoker = new HttpMessageInvoker(handler);
        using var client = new HttpClient(handler, disposeHandler: false) { BaseAddress = server.ApiAddress, Timeout = Bound };
        using var created = await client.PostAsync("topics", null).WaitAsync(Bound);
        var topic = (await created.Content.ReadFromJsonAsync<Dictionary<string, object>>())!["topicId"].ToString();

        using var socket = new ClientWebSocket();
        socket.Options.HttpVersion = HttpVersion.Version20;
        socket.Options.HttpVersionPolicy = HttpVersionPolicy.RequestVersionExact;
        socket.Options.AddSubProtocol("laharsub.v1");
        socket.Options.CollectHttpResponseDetails = true;
        var address = new UriBuilder(new Uri(server.ApiAddress, $"subscriptions?topics={topic}")) { Scheme = "wss" }.Uri;
        using var timeout = new CancellationTokenSource(Bound);
        await socket.ConnectAsync(address, invoker, timeout.Token);

        Assert.Equal(HttpStatusCode.OK, socket.HttpStatusCode);
        Assert.Equal("laharsub.v1", socket.SubProtocol);
        Assert.Contains("\"type\":\"subscribed\"", await ReceiveAsync(socket, timeout.Token));
    }

    [Fact]
    public async Task PriorKnowledgeH2cServesPollsAndStreams()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Kestrel:Endpoints:H2c:Url"] = "http://127.0.0.1:0",
            ["Kestrel:Endpoints:H2c:Protocols"] = "Http2",
        });
        using var client = new HttpClient
        {
            BaseAddress = server.ApiAddress,
            DefaultRequestVersion = HttpVersion.Version20,
            DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Timeout = Bound,
        };
        using var created = await client.PostAsync("topics", null).WaitAsync(Bound);
        Assert.Equal(HttpVersion.Version20, created.Version);
        var topic = (await created.Content.ReadFromJsonAsync<Dictionary<string, object>>())!["topicId"].ToString();
        using var published = await client.PostAsync($"topics/{topic}", new StringContent("h2c")).WaitAsync(Bound);

        using var poll = await client.GetAsync($"subscriptions?topics={topic}:1").WaitAsync(Bound);

        Assert.Equal(HttpStatusCode.OK, poll.StatusCode);
        Assert.Equal(HttpVersion.Version20, poll.Version);
        Assert.Contains("\"body\":\"h2c\"", await poll.Content.ReadAsStringAsync());
    }

    private static async Task<string> ReadUntilAsync(StreamReader reader, string prefix)
    {
        using var timeout = new CancellationTokenSource(Bound);
        while (await reader.ReadLineAsync(timeout.Token) is { } line)
        {
            if (line.StartsWith(prefix, StringComparison.Ordinal))
            {
                return line;
            }
        }
        throw new Xunit.Sdk.XunitException($"The stream ended before a line starting with '{prefix}'.");
    }

    private static async Task<string> ReceiveAsync(ClientWebSocket socket, CancellationToken cancellationToken)
    {
        var buffer = new byte[16 * 1024];
        var received = await socket.ReceiveAsync(buffer, cancellationToken);
        return Encoding.UTF8.GetString(buffer, 0, received.Count);
    }
}
