using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Client.Tests;

/// <summary>The client as an application wires it: a typed client of IHttpClientFactory.</summary>
public sealed class DependencyInjectionTests
{
    [Fact]
    public async Task AddLaharsubClientRegistersAClientThatPublishesAndSubscribes()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var services = new ServiceCollection();
        services.AddLaharsubClient(options =>
        {
            options.ApiAddress = server.ApiAddress;
            options.Transport = LaharsubTransport.LongPolling;
            options.PollTimeout = TimeSpan.FromSeconds(110);
        });
        await using var provider = services.BuildServiceProvider();
        var client = provider.GetRequiredService<LaharsubClient>();

        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        await client.PublishAsync(topic, "hello").WaitAsync(TestSupport.Timeout);

        Assert.Equal("hello", (await reader.NextAsync()).Text());
        Assert.Equal(server.ApiAddress, client.ApiAddress);
        // The factory's HttpClient would cut requests at 100 s; the registration turns that off, so the hold is not lowered.
        Assert.Equal(TimeSpan.FromSeconds(110), client.PollTimeout);
    }

    [Fact]
    public async Task TheBuilderItReturnsTakesTheApplicationsHandlers()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var requests = new List<string>();
        var services = new ServiceCollection();
        services.AddLaharsubClient(options => options.ApiAddress = server.ApiAddress)
            .AddHttpMessageHandler(() => new RecordingHandler(requests));
        await using var provider = services.BuildServiceProvider();

        await provider.GetRequiredService<LaharsubClient>().CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        Assert.Equal(["POST /ps/topics"], requests);
    }

    [Fact]
    public async Task TheTypedClientPatternBuildsTheClientOverTheFactorysHttpClient()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var services = new ServiceCollection();
        services.AddHttpClient<LaharsubClient>(http => http.BaseAddress = server.ApiAddress);
        await using var provider = services.BuildServiceProvider();
        var client = provider.GetRequiredService<LaharsubClient>();

        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        Assert.Equal(topic, (await client.GetTopicAsync(topic).WaitAsync(TestSupport.Timeout)).TopicId);
        // HttpClient.Timeout stays at its 100 s there, so the hold time is kept 10 s under it: the default 30 s fits.
        Assert.Equal(TimeSpan.FromSeconds(30), client.PollTimeout);
    }

    [Fact]
    public async Task ATimeProviderInTheContainerBecomesTheClientsClockUnlessTheOptionsSetOne()
    {
        var container = new FakeTimeProvider();
        var own = new FakeTimeProvider();
        var services = new ServiceCollection();
        services.AddSingleton<TimeProvider>(container);
        services.AddLaharsubClient(options => options.ApiAddress = new Uri("http://localhost:5000/ps/"));
        await using var provider = services.BuildServiceProvider();
        var ownServices = new ServiceCollection();
        ownServices.AddSingleton<TimeProvider>(container);
        ownServices.AddLaharsubClient(options =>
        {
            options.ApiAddress = new Uri("http://localhost:5000/ps/");
            options.TimeProvider = own;
        });
        await using var ownProvider = ownServices.BuildServiceProvider();

        Assert.Same(container, provider.GetRequiredService<LaharsubClient>().TimeProvider);
        Assert.Same(own, ownProvider.GetRequiredService<LaharsubClient>().TimeProvider);
    }

    [Fact]
    public async Task ARegistrationWithoutAnAddressFailsNamingIt()
    {
        var services = new ServiceCollection();
        services.AddLaharsubClient(options => options.PollTimeout = TimeSpan.FromSeconds(20));
        await using var provider = services.BuildServiceProvider();

        var error = Assert.Throws<OptionsValidationException>(() => provider.GetRequiredService<LaharsubClient>());

        Assert.Contains("ApiAddress", error.Message, StringComparison.Ordinal);
    }

    private sealed class RecordingHandler(List<string> requests) : DelegatingHandler
    {
        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            lock (requests)
            {
                requests.Add($"{request.Method} {request.RequestUri!.AbsolutePath}");
            }
            return base.SendAsync(request, cancellationToken);
        }
    }
}
