using System.Text.RegularExpressions;
using Laharsub.Server.Delivery;
using Laharsub.Server.Endpoints;
using Laharsub.Server.Storage;
using Laharsub.Server.Tests.Support;
using Laharsub.Server.Transport;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.ScaleOut;

/// <summary>
/// docs/reverse-proxy.md tried: Debian's nginx with deploy/nginx/laharsub.conf in front of two standalone
/// instances on one Redis. Every request of a test goes through nginx except the checks of which instance
/// holds a poll, which ask each instance directly.
/// </summary>
public sealed partial class ReverseProxyTests(ReverseProxyTests.ProxiedCluster cluster) : IClassFixture<ReverseProxyTests.ProxiedCluster>
{
    private static readonly TimeSpan Unbuffered = TimeSpan.FromSeconds(10);

    private readonly HttpClient _proxy = cluster.Proxy;

    /// <summary>Redis, two instances and nginx, started once for the class: each test uses topics of its own.</summary>
    public sealed class ProxiedCluster : IAsyncLifetime
    {
        private readonly List<HostProcess> _hosts = [];
        private NginxReverseProxy? _nginx;

        public List<HttpClient> Instances { get; } = [];

        public HttpClient Proxy { get; private set; } = null!;

        public NginxReverseProxy Nginx => _nginx ?? throw new InvalidOperationException("nginx did not start.");

        public async Task InitializeAsync()
        {
            var settings = await InstanceSettingsAsync();
            var starting = Enumerable.Range(0, 2).Select(_ => HostProcess.StartAsync(settings));
            _hosts.AddRange(await Task.WhenAll(starting).WaitAsync(TimeSpan.FromSeconds(90)));
            Instances.AddRange(_hosts.Select(h => new HttpClient { BaseAddress = h.ApiAddress, Timeout = TimeSpan.FromSeconds(30) }));
            _nginx = await NginxReverseProxy.StartAsync(_hosts.Select(h => h.BaseAddress)).WaitAsync(TimeSpan.FromSeconds(60));
            Proxy = new HttpClient { BaseAddress = _nginx.ApiAddress, Timeout = TimeSpan.FromSeconds(30) };
        }

        /// <summary>The settings of instances sharing a Redis key prefix of their own, as docs/reverse-proxy.md says to run them behind nginx: its address trusted, no per-address connection cap.</summary>
        public static async Task<string[]> InstanceSettingsAsync()
        {
            var redis = await SharedRedis.GetAsync();
            return [$"Laharsub:Redis:Configuration={redis.Configuration}", $"Laharsub:Redis:KeyPrefix={SharedRedis.UniquePrefix()}",
                "Laharsub:ForwardedHeaders:KnownProxies:0=127.0.0.1", "Laharsub:Limits:MaxConnectionsPerClient=0",
                "Laharsub:Demo:Enabled=false", "Logging:LogLevel:Default=Warning"];
        }

        public async Task DisposeAsync()
        {
            Proxy?.Dispose();
            Instances.ForEach(c => c.Dispose());
            // nginx first, whatever the tests did: a master left running would hold its port and workers.
            if (_nginx is not null)
            {
                await _nginx.DisposeAsync();
            }
            await Task.WhenAll(_hosts.Select(h => h.DisposeAsync().AsTask()));
        }
    }

    [Fact]
    public async Task TwoPollsThroughTheProxyWaitOneOnEachInstanceAndAPublishThroughItWakesBoth()
    {
        var topic = await _proxy.CreateTopicAsync();

        var polls = Enumerable.Range(0, 2).Select(_ => _proxy.PollAsync($"topics={topic}:1&timeout=60")).ToArray();

        // Round robin with no stickiness: consecutive requests go to different instances.
        await Eventually.HoldsAsync(async () => await WaitingPollsAsync(cluster.Instances[0], topic) == 1
            && await WaitingPollsAsync(cluster.Instances[1], topic) == 1, WireClient.Bound, "each instance holds one of the two polls");
        Assert.DoesNotContain(polls, poll => poll.IsCompleted);

        await _proxy.PublishTextAsync(topic, "through nginx");

        foreach (var poll in polls)
        {
            var answer = await poll.WaitAsync(Unbuffered);
            Assert.Equal("through nginx", Assert.Single(answer.Messages).Text);
        }
    }

    [Fact]
    public async Task AnEventStreamThroughTheProxyGetsItsOpenEventAndThenAMessageAsTheyAreWritten()
    {
        var topic = await _proxy.CreateTopicAsync();

        await using var stream = await EventStreamReader.OpenAsync(_proxy, $"topics={topic}");
        // Both arrive long before a buffer of nginx's would fill or the stream end: nothing is held back.
        await stream.ReadEventAsync("subscribed", Unbuffered);
        await _proxy.PublishTextAsync(topic, "streamed through nginx");
        var message = await stream.ReadEventAsync("message", Unbuffered);

        Assert.Equal("streamed through nginx", message.Json.GetProperty("body").GetString());
    }

    [Fact]
    public async Task AWebSocketThroughTheProxyOpensAndReceivesAMessage()
    {
        var topic = await _proxy.CreateTopicAsync();

        await using var socket = await LaharsubSocket.ConnectAsync(cluster.Nginx.ApiAddress, $"topics={topic}");
        await socket.ReceiveAsync("subscribed", Unbuffered);
        await _proxy.PublishTextAsync(topic, "over a socket through nginx");
        var frame = await socket.ReceiveAsync("message", Unbuffered);

        Assert.Equal(LaharsubSocket.SubProtocol, socket.Socket.SubProtocol);
        Assert.Equal("over a socket through nginx", frame.GetProperty("message").GetProperty("body").GetString());
    }

    /// <summary>
    /// The document's servers (what Scalar's "Try it" and generated clients call) are where the client
    /// reached nginx: its host and port, not the instance's, and not nginx's host without the port.
    /// </summary>
    [Theory]
    [InlineData(null)]
    [InlineData("laharsub.example:8443")]
    public async Task TheOpenApiDocumentThroughTheProxyNamesTheHostAndPortTheClientUsed(string? host)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(cluster.Nginx.BaseAddress, "openapi/v1.json"));
        request.Headers.Host = host;

        using var response = await _proxy.SendAsync(request).WaitAsync(Unbuffered);

        response.EnsureSuccessStatusCode();
        using var document = System.Text.Json.JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        var server = new Uri(document.RootElement.GetProperty("servers")[0].GetProperty("url").GetString()!);
        Assert.Equal(("http", host ?? cluster.Nginx.BaseAddress.Authority), (server.Scheme, server.Authority));
    }

    [Fact]
    public void TheConfigurationOutlastsTheLongestPollAndTheHeartbeatsAndPassesTheLargestMessage()
    {
        var configuration = NginxReverseProxy.ReadConfiguration();
        var subscriptions = SubscriptionLocationPattern().Match(configuration);
        Assert.True(subscriptions.Success, $"{NginxReverseProxy.ConfigRelativePath} has no 'location = /ps/subscriptions {{ ... }}' block");
        var readTimeout = TimeSpan.FromSeconds(int.Parse(ReadTimeoutPattern().Match(subscriptions.Value).Groups[1].Value));
        var bodyLimit = MegabytesPattern().Match(configuration);
        Assert.True(bodyLimit.Success, $"{NginxReverseProxy.ConfigRelativePath} has no 'client_max_body_size Nm;'");

        Assert.True(readTimeout > new LaharsubDeliveryOptions().MaxPollTimeout, $"proxy_read_timeout {readTimeout} ends polls the server still holds");
        Assert.True(readTimeout > new LaharsubStreamOptions().HeartbeatInterval && readTimeout > new LaharsubStreamOptions().KeepAliveInterval,
            $"proxy_read_timeout {readTimeout} ends quiet streams between heartbeats");
        Assert.True(int.Parse(bodyLimit.Groups[1].Value) * 1024 * 1024 > new LaharsubStoreOptions().MaxMessageBytes,
            "client_max_body_size refuses messages the server would store");
        Assert.Contains("proxy_buffering off;", subscriptions.Value);
    }

    [Fact]
    public void TheGuideQuotesTheConfigurationAsItIs()
    {
        var guide = File.ReadAllText(Path.Combine(Path.GetDirectoryName(NginxReverseProxy.ConfigurationPath)!, "../../docs/reverse-proxy.md"));
        var quoted = QuotedConfigurationPattern().Match(guide);

        Assert.True(quoted.Success, "docs/reverse-proxy.md has no ```nginx block");
        Assert.Equal(NginxReverseProxy.ReadConfiguration(), quoted.Groups[1].Value);
    }

    private static async Task<int> WaitingPollsAsync(HttpClient instance, long topic) =>
        (await instance.GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32();

    [GeneratedRegex(@"location = /ps/subscriptions \{[^}]*\}")]
    private static partial Regex SubscriptionLocationPattern();

    [GeneratedRegex(@"```nginx\n(.*?)```", RegexOptions.Singleline)]
    private static partial Regex QuotedConfigurationPattern();

    [GeneratedRegex(@"proxy_read_timeout ([0-9]+)s;")]
    private static partial Regex ReadTimeoutPattern();

    [GeneratedRegex(@"client_max_body_size ([0-9]+)m;")]
    private static partial Regex MegabytesPattern();
}
