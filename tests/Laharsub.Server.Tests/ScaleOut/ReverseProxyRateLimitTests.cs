using System.Net;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.ScaleOut;

/// <summary>
/// docs/reverse-proxy.md's nginx in front of one standalone instance with a rate limit, nginx's address trusted: each
/// client behind nginx spends a bucket of its own, though all of them reach the instance over nginx's kept-alive
/// connections (where the fast path, when on, reads each request's X-Forwarded-For by the pipeline's rule).
/// </summary>
public sealed class ReverseProxyRateLimitTests
{
    [Fact]
    public async Task EachClientBehindTheProxyHasARateLimitOfItsOwn()
    {
        // One publish an hour per client: none comes back while the test runs.
        await using var instance = await HostProcess.StartAsync("Laharsub:RateLimit:RequestsPerPeriod=1", "Laharsub:RateLimit:Period=01:00:00",
            "Laharsub:ForwardedHeaders:KnownProxies:0=127.0.0.1", "Laharsub:Limits:MaxConnectionsPerClient=0",
            "Laharsub:Demo:Enabled=false", "Logging:LogLevel:Default=Warning").WaitAsync(TimeSpan.FromSeconds(90));
        await using var nginx = await NginxReverseProxy.StartAsync([instance.BaseAddress]).WaitAsync(TimeSpan.FromSeconds(60));
        // Three clients, told apart by their loopback addresses, which nginx forwards (none of them nginx's own, 127.0.0.1);
        // the third spends its permit on the topic.
        using var first = Loopback.From(IPAddress.Parse("127.0.0.3"), nginx.ApiAddress);
        using var second = Loopback.From(IPAddress.Parse("127.0.0.4"), nginx.ApiAddress);
        using var creator = Loopback.From(IPAddress.Parse("127.0.0.5"), nginx.ApiAddress);
        var topic = await creator.CreateTopicAsync();

        var statuses = new List<HttpStatusCode>();
        foreach (var (client, body) in new[] { (first, "first"), (first, "first again"), (second, "second") })
        {
            using var response = await client.PostAsync($"topics/{topic}", new StringContent(body)).WaitAsync(WireClient.Bound);
            statuses.Add(response.StatusCode);
        }

        Assert.Equal([HttpStatusCode.Created, HttpStatusCode.TooManyRequests, HttpStatusCode.Created], statuses);
        var stored = await creator.PollAsync($"topics={topic}:1&timeout=0");
        Assert.Equal(["first", "second"], stored.Messages.Select(message => message.Text));
    }
}
