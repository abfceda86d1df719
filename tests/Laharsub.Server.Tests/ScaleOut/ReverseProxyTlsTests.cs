using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.ScaleOut;

/// <summary>
/// deploy/nginx/laharsub-tls.conf tried: nginx over TLS (a self-signed certificate made with openssl for
/// the test) and HTTP/2 in front of an instance. More event streams than a browser opens HTTP/1.1
/// connections to a host run at once as streams of one connection, which nginx's access log shows.
/// </summary>
public sealed class ReverseProxyTlsTests(ReverseProxyTlsTests.TlsProxy proxy) : IClassFixture<ReverseProxyTlsTests.TlsProxy>
{
    /// <summary>More than the 6 connections per host a browser opens over HTTP/1.1.</summary>
    private const int Streams = 8;

    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(10);

    /// <summary>A certificate for 127.0.0.1, an instance, and nginx with the TLS configuration.</summary>
    public sealed class TlsProxy : IAsyncLifetime
    {
        private readonly DirectoryInfo _files = Directory.CreateTempSubdirectory("laharsub-tls-");
        private HostProcess? _host;
        private NginxReverseProxy? _nginx;
        private X509Certificate2? _certificate;

        public NginxReverseProxy Nginx => _nginx ?? throw new InvalidOperationException("nginx did not start.");

        /// <summary>A client that speaks HTTP/2 only and trusts the test's certificate and no other.</summary>
        public HttpClient Client { get; private set; } = null!;

        public async Task InitializeAsync()
        {
            var certificatePath = Path.Combine(_files.FullName, "laharsub.crt");
            var keyPath = Path.Combine(_files.FullName, "laharsub.key");
            var (exitCode, output) = await Command.RunAsync("openssl",
                ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyPath, "-out", certificatePath],
                TimeSpan.FromSeconds(30), "install Debian's openssl package");
            Assert.True(exitCode == 0, $"openssl could not make a self-signed certificate:\n{output}");
            _certificate = X509CertificateLoader.LoadCertificateFromFile(certificatePath);

            _host = await HostProcess.StartAsync(await ReverseProxyTests.ProxiedCluster.InstanceSettingsAsync()).WaitAsync(TimeSpan.FromSeconds(90));
            _nginx = await NginxReverseProxy.StartTlsAsync([_host.BaseAddress], certificatePath, keyPath).WaitAsync(TimeSpan.FromSeconds(60));
            var trusted = _certificate.GetCertHashString();
            var handler = new SocketsHttpHandler
            {
                SslOptions = { RemoteCertificateValidationCallback = (_, presented, _, _) => presented?.GetCertHashString() == trusted },
            };
            Client = new HttpClient(new Http2Only(handler)) { BaseAddress = _nginx.ApiAddress, Timeout = TimeSpan.FromSeconds(30) };
        }

        public async Task DisposeAsync()
        {
            Client?.Dispose();
            if (_nginx is not null)
            {
                await _nginx.DisposeAsync();
            }
            if (_host is not null)
            {
                await _host.DisposeAsync();
            }
            _certificate?.Dispose();
            _files.Delete(recursive: true);
        }
    }

    /// <summary>
    /// Every request over HTTP/2 or not at all: HttpClient's default version applies only to the requests it
    /// makes itself, not to an HttpRequestMessage made by the caller (as the event streams' are).
    /// </summary>
    private sealed class Http2Only(HttpMessageHandler inner) : DelegatingHandler(inner)
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            request.Version = HttpVersion.Version20;
            request.VersionPolicy = HttpVersionPolicy.RequestVersionExact;
            return base.SendAsync(request, cancellationToken);
        }
    }

    [Fact]
    public async Task MoreEventStreamsThanABrowsersConnectionsPerHostShareOneHttp2ConnectionAndEachGetsTheMessage()
    {
        var client = proxy.Client;
        var topic = await client.CreateTopicAsync();
        var streams = new List<EventStreamReader>();
        try
        {
            for (var i = 0; i < Streams; i++)
            {
                var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}");
                streams.Add(stream);
                Assert.Equal(HttpVersion.Version20, stream.Response.Version);
                await stream.ReadEventAsync("subscribed", Bound);
            }

            await client.PublishTextAsync(topic, "to every stream of the connection");

            foreach (var stream in streams)
            {
                var message = await stream.ReadEventAsync("message", Bound);
                Assert.Equal("to every stream of the connection", message.Json.GetProperty("body").GetString());
            }
        }
        finally
        {
            foreach (var stream in streams)
            {
                await stream.DisposeAsync();
            }
        }

        // nginx logs a request when it ends: a stream once the client has closed it.
        string[] lines = [];
        await Eventually.HoldsAsync(async () =>
        {
            lines = await File.ReadAllLinesAsync(proxy.Nginx.AccessLogPath);
            return lines.Count(line => line.Contains(" GET /ps/subscriptions", StringComparison.Ordinal)) >= Streams;
        }, Bound, $"nginx logged the {Streams} streams");
        var requests = lines.Select(line => line.Split(' ')).Where(fields => fields[4].StartsWith("/ps/", StringComparison.Ordinal)).ToList();
        Assert.All(requests, fields => Assert.Equal("HTTP/2.0", fields[1]));
        Assert.Single(requests.Select(fields => fields[0]).Distinct());
    }

    [Fact]
    public async Task TheOpenApiDocumentOverTlsNamesTheHttpsAddressTheClientUsed()
    {
        using var response = await proxy.Client.GetAsync(new Uri(proxy.Nginx.BaseAddress, "openapi/v1.json")).WaitAsync(Bound);

        response.EnsureSuccessStatusCode();
        using var document = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        var server = new Uri(document.RootElement.GetProperty("servers")[0].GetProperty("url").GetString()!);
        Assert.Equal(("https", proxy.Nginx.BaseAddress.Authority), (server.Scheme, server.Authority));
    }

    /// <summary>The TLS file is laharsub.conf with a TLS listener: the upstream and everything below the certificate settings are the same.</summary>
    [Fact]
    public void TheTlsConfigurationSaysWhatThePlainOneSaysBelowItsListener()
    {
        var plain = NginxReverseProxy.ReadConfiguration();
        var tls = File.ReadAllText(NginxReverseProxy.RepositoryPath(NginxReverseProxy.TlsConfigRelativePath));

        Assert.Equal(Between(plain, "# A WebSocket upgrade", "server {"), Between(tls, "# A WebSocket upgrade", "server {"));
        Assert.Equal(From(plain, "    # Above Laharsub:MaxMessageBytes"), From(tls, "    # Above Laharsub:MaxMessageBytes"));
    }

    private static string Between(string text, string start, string end)
    {
        var from = text.IndexOf(start, StringComparison.Ordinal);
        Assert.True(from >= 0, $"no '{start}' in the configuration");
        return text[from..text.IndexOf(end, from, StringComparison.Ordinal)];
    }

    private static string From(string text, string start)
    {
        var from = text.IndexOf(start, StringComparison.Ordinal);
        Assert.True(from >= 0, $"no '{start}' in the configuration");
        return text[from..];
    }
}
