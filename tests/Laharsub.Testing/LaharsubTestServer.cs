using Laharsub.Server.Delivery;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage;
using Laharsub.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Laharsub.Testing;

/// <summary>
/// The real standalone Laharsub server (Kestrel, real HTTP) on a loopback port, for tests.
/// </summary>
public sealed class LaharsubTestServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private LaharsubTestServer(WebApplication app, Uri baseAddress)
    {
        _app = app;
        BaseAddress = baseAddress;
    }

    /// <summary>The server's root, e.g. <c>http://127.0.0.1:40123/</c>.</summary>
    public Uri BaseAddress { get; }

    /// <summary>The Laharsub API root, e.g. <c>http://127.0.0.1:40123/ps/</c>.</summary>
    public Uri ApiAddress => new(BaseAddress, "ps/");

    public IServiceProvider Services => _app.Services;

    /// <summary>Polls waiting on <paramref name="topicId"/> at this server now.</summary>
    public int WaitingPolls(long topicId) => _app.Services.GetRequiredService<TopicSignals>().WaitingOn(topicId);

    public ILaharsubStore Store => _app.Services.GetRequiredService<ILaharsubStore>();

    /// <summary>
    /// Registers <paramref name="server"/>'s store, and the signals it wakes polls through, in a new
    /// server: a restart that keeps the data, as a persistent store would.
    /// </summary>
    public static Action<IServiceCollection> KeepData(LaharsubTestServer server)
    {
        var store = server.Store;
        var signals = server.Services.GetRequiredService<TopicSignals>();
        return services =>
        {
            services.AddSingleton(store);
            services.AddSingleton(signals);
        };
    }

    /// <summary>
    /// Starts a server on 127.0.0.1. <paramref name="port"/> 0 picks a free port; a fixed port lets a
    /// test stop a server and start another where clients expect it. <paramref name="services"/> may
    /// register services first, e.g. the <see cref="ILaharsubStore"/> and <see cref="TopicSignals"/> kept across a restart (see <see cref="KeepData"/>).
    /// <paramref name="settings"/> are configuration keys such as <c>Laharsub:MaxTopics</c>, as an operator would set them.
    /// </summary>
    public static async Task<LaharsubTestServer> StartAsync(
        Action<LaharsubOptions>? configure = null,
        Action<IServiceCollection>? services = null,
        int port = 0,
        IReadOnlyDictionary<string, string?>? settings = null,
        CancellationToken cancellationToken = default)
    {
        var app = StandaloneHost.Build(["--urls", $"http://127.0.0.1:{port}"], builder =>
        {
            if (settings is not null)
            {
                builder.Configuration.AddInMemoryCollection(settings);
            }
            builder.Logging.ClearProviders();
            builder.Logging.SetMinimumLevel(LogLevel.Warning);
            services?.Invoke(builder.Services);
            if (configure is not null)
            {
                builder.Services.Configure(configure);
            }
        });
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(30));
        await app.StartAsync(timeout.Token).ConfigureAwait(false);
        var address = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        return new LaharsubTestServer(app, new Uri(address.TrimEnd('/') + "/"));
    }

    /// <summary>An HttpClient whose base address is <see cref="ApiAddress"/> and whose timeout bounds a hung test.</summary>
    public HttpClient CreateClient(TimeSpan? timeout = null) =>
        new() { BaseAddress = ApiAddress, Timeout = timeout ?? TimeSpan.FromSeconds(30) };

    /// <summary>Stops the server gracefully (as SIGTERM would), bounded by 30 seconds.</summary>
    public async Task StopAsync()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await _app.StopAsync(timeout.Token).ConfigureAwait(false);
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync().ConfigureAwait(false);
        await _app.DisposeAsync().ConfigureAwait(false);
    }
}
