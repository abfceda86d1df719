using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.ScaleOut;

/// <summary>
/// A rolling restart behind deploy/nginx/laharsub.conf: each of two instances is stopped (SIGTERM) and
/// started again at its address, one after the other, and every request through nginx meanwhile is
/// answered by the instance that runs. With nginx's default upstream health (max_fails=1 fail_timeout=10s)
/// the first instance, marked down while it was stopped, is still marked when the second stops: nginx
/// answers 502 "no live upstreams" (docs/reverse-proxy.md, "Rolling restarts").
/// </summary>
public sealed class ReverseProxyRollingRestartTests : IAsyncLifetime
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    private readonly List<HostProcess> _hosts = [];
    private string[] _settings = [];
    private NginxReverseProxy? _nginx;
    private HttpClient? _proxy;

    public async Task InitializeAsync()
    {
        _settings = await ReverseProxyTests.ProxiedCluster.InstanceSettingsAsync();
        _hosts.AddRange(await Task.WhenAll(Enumerable.Range(0, 2).Select(_ => HostProcess.StartAsync(_settings))).WaitAsync(TimeSpan.FromSeconds(90)));
        _nginx = await NginxReverseProxy.StartAsync(_hosts.Select(h => h.BaseAddress)).WaitAsync(TimeSpan.FromSeconds(60));
        _proxy = new HttpClient { BaseAddress = _nginx.ApiAddress, Timeout = Bound };
    }

    public async Task DisposeAsync()
    {
        _proxy?.Dispose();
        if (_nginx is not null)
        {
            await _nginx.DisposeAsync();
        }
        await Task.WhenAll(_hosts.Select(h => h.DisposeAsync().AsTask()));
    }

    [Fact]
    public async Task RestartingTheInstancesOneAfterTheOtherLeavesNoRequestUnanswered()
    {
        var proxy = _proxy!;
        var topic = await proxy.CreateTopicAsync();
        var published = 0;

        for (var i = 0; i < _hosts.Count; i++)
        {
            var port = _hosts[i].BaseAddress.Port;
            await _hosts[i].StopAsync();

            // One worker alternates between the two servers: of four requests, two are sent to the stopped
            // one first. Reads and publishes alike reach the other.
            for (var request = 0; request < 2; request++)
            {
                await AnsweredAsync(proxy.GetAsync($"topics/{topic}"), $"GET topics/{topic} with instance {i} stopped");
                await AnsweredAsync(proxy.PostAsync($"topics/{topic}", new StringContent($"message {++published}")), $"a publish with instance {i} stopped");
            }

            await _hosts[i].DisposeAsync();
            _hosts[i] = await HostProcess.StartOnPortAsync(port, _settings).WaitAsync(TimeSpan.FromSeconds(90));
        }

        var answer = await proxy.PollAsync($"topics={topic}:1&timeout=5").WaitAsync(Bound);
        Assert.Equal(Enumerable.Range(1, published).Select(n => $"message {n}"), answer.Messages.Select(message => message.Text));
    }

    private async Task AnsweredAsync(Task<HttpResponseMessage> sending, string what)
    {
        using var response = await sending.WaitAsync(Bound);
        Assert.True(response.IsSuccessStatusCode,
            $"{what}: nginx answered {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}\nnginx's log:\n{_nginx!.Output}");
    }
}
