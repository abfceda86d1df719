using System.Net;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// <c>/health/live</c> answers 200 whenever the process serves, so that an orchestrator never restarts
/// instances for a Redis outage; <c>/health/ready</c> answers 503 while the store is unreachable or the
/// instance is stopping, so that a load balancer sends new clients elsewhere.
/// </summary>
public sealed class HealthProbeTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task WhileRedisIsDownLiveStaysHealthyAndReadyIsNotUntilRedisIsBack()
    {
        await using var redis = await RedisServer.StartAsync();
        await using var server = await HostProcess.StartAsync($"Laharsub:Redis:Configuration={redis.Configuration}", "Laharsub:Demo:Enabled=false");
        using var http = new HttpClient { BaseAddress = server.BaseAddress, Timeout = Bound };
        Assert.Equal((HttpStatusCode.OK, HttpStatusCode.OK), (await StatusAsync(http, "health/live"), await StatusAsync(http, "health/ready")));

        await redis.KillAsync();

        await Eventually.HoldsAsync(async () => await StatusAsync(http, "health/ready") == HttpStatusCode.ServiceUnavailable, Bound,
            "/health/ready answers 503 with Redis down");
        Assert.Equal(HttpStatusCode.OK, await StatusAsync(http, "health/live"));
        Assert.Equal(HttpStatusCode.ServiceUnavailable, await StatusAsync(http, "health"));

        await using var redisAgain = await RedisServer.StartAsync(redis.Port);
        await Eventually.HoldsAsync(async () => await StatusAsync(http, "health/ready") == HttpStatusCode.OK, Bound,
            "/health/ready answers 200 again once Redis is back");
    }

    [Fact]
    public async Task OnceStoppingBeginsReadyAnswers503AndLiveStill200()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var http = new HttpClient { BaseAddress = server.BaseAddress, Timeout = Bound };
        Assert.Equal(HttpStatusCode.OK, await StatusAsync(http, "health/ready"));
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var release = new ManualResetEventSlim();
        // ApplicationStopping's callbacks run inside the stop, before Kestrel stops listening: holding one
        // there holds the instance in the state a load balancer must see as not ready.
        server.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(() =>
        {
            entered.TrySetResult();
            release.Wait(Bound);
        });

        var stopping = Task.Run(server.StopAsync);
        await entered.Task.WaitAsync(Bound);
        try
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, await StatusAsync(http, "health/ready"));
            Assert.Equal(HttpStatusCode.OK, await StatusAsync(http, "health/live"));
            Assert.Equal(HttpStatusCode.OK, await StatusAsync(http, "health"));
        }
        finally
        {
            release.Set();
            await stopping.WaitAsync(Bound);
        }
    }

    private static async Task<HttpStatusCode> StatusAsync(HttpClient http, string path)
    {
        using var response = await http.GetAsync(path).WaitAsync(Bound);
        return response.StatusCode;
    }
}
