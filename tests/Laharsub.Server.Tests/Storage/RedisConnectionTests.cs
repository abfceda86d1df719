using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Laharsub.Server.Delivery;
using Laharsub.Server.Redis;
using Laharsub.Server.Storage;
using Laharsub.Testing;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using StackExchange.Redis;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// The Redis store connects in the background, never in start-up's time: a server starts while its Redis is
/// down and answers 503 until Redis is up; an application may give it the multiplexer it already has.
/// </summary>
public sealed class RedisConnectionTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task AServerStartedWhileRedisIsDownAnswers503ThenServesOnceRedisIsUp()
    {
        var port = HostProcess.FreeLoopbackPort();
        await using var server = await LaharsubTestServer.StartAsync(
            services: services => services.AddLaharsub().AddRedis($"127.0.0.1:{port}"));
        using var http = server.CreateClient(Bound);

        using (var refused = await http.PostAsync("topics", null).WaitAsync(Bound))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
            Assert.NotNull(refused.Headers.RetryAfter);
            var problem = await refused.Content.ReadFromJsonAsync<JsonElement>();
            Assert.Contains("Redis", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        }
        Assert.Equal(HttpStatusCode.ServiceUnavailable, await StatusAsync(http, new Uri(server.BaseAddress, "health/ready")));

        await using var redis = await RedisServer.StartAsync(port);
        await Eventually.HoldsAsync(async () =>
        {
            using var created = await http.PostAsync("topics", null).WaitAsync(Bound);
            return created.StatusCode == HttpStatusCode.Created;
        }, Bound, "a topic is created once Redis is up, without restarting the server");
        Assert.Equal(HttpStatusCode.OK, await StatusAsync(http, new Uri(server.BaseAddress, "health/ready")));
    }

    [Fact]
    public async Task AStoreOnTheApplicationsMultiplexerIsResolvedWithoutWaitingForItAndLeavesItOpen()
    {
        var redis = await SharedRedis.GetAsync();
        await using var connection = await ConnectionMultiplexer.ConnectAsync(redis.Configuration);
        var given = new TaskCompletionSource<IConnectionMultiplexer>(TaskCreationOptions.RunContinuationsAsynchronously);
        var asked = 0;
        var services = new ServiceCollection();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().Build());
        services.AddSingleton(Options.Create(new LaharsubStoreOptions()));
        services.AddSingleton<ITopicSignals>(new TopicSignals());
        services.AddSingleton(TimeProvider.System);
        services.AddLogging();
        services.AddOptions<LaharsubRedisOptions>().Configure(options => options.KeyPrefix = SharedRedis.UniquePrefix());
        new Builder(services).AddRedis(options => options.ConnectionMultiplexerFactory = () =>
        {
            Interlocked.Increment(ref asked);
            return given.Task;
        });
        var provider = services.BuildServiceProvider(new ServiceProviderOptions { ValidateOnBuild = true, ValidateScopes = true });

        await using (provider)
        {
            // The application's connection is not there yet, and may never be: resolving the store does not wait for it.
            var store = provider.GetRequiredService<ILaharsubStore>();
            var creating = store.CreateTopicAsync().AsTask();
            Assert.False(creating.IsCompleted, "a command answered before the store had a connection");
            given.SetResult(connection);
            Assert.NotNull(await creating.WaitAsync(Bound));
            Assert.NotNull(await store.CreateTopicAsync().AsTask().WaitAsync(Bound));
            Assert.Equal(1, Volatile.Read(ref asked));
        }

        Assert.True(connection.IsConnected, "disposing the store closed the application's multiplexer");
        await connection.GetDatabase().PingAsync().WaitAsync(Bound);
    }

    [Fact]
    public void AnAddRedisWithNeitherAConfigurationNorAMultiplexerStopsTheStartNamingTheSetting()
    {
        var services = new ServiceCollection();
        services.AddSingleton<IConfiguration>(new ConfigurationBuilder().Build());
        new Builder(services).AddRedis();
        using var provider = services.BuildServiceProvider();

        var refused = Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<IOptions<LaharsubRedisOptions>>().Value);
        Assert.Contains("Laharsub:Redis:Configuration", refused.Message, StringComparison.Ordinal);
    }

    private static async Task<HttpStatusCode> StatusAsync(HttpClient http, Uri address)
    {
        using var response = await http.GetAsync(address).WaitAsync(Bound);
        return response.StatusCode;
    }

    private sealed class Builder(IServiceCollection services) : ILaharsubBuilder
    {
        public IServiceCollection Services { get; } = services;
    }
}
