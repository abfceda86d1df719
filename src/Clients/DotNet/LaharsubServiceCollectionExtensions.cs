using Laharsub.Client;
using Microsoft.Extensions.Options;

namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registers <see cref="LaharsubClient"/> with <c>IHttpClientFactory</c>.</summary>
public static class LaharsubServiceCollectionExtensions
{
    /// <summary>
    /// Registers <see cref="LaharsubClient"/> as a typed client of <c>IHttpClientFactory</c>, named
    /// <c>LaharsubClient</c>, configured by <paramref name="configure"/> (set at least
    /// <see cref="LaharsubClientOptions.ApiAddress"/>). The <see cref="HttpClient"/>'s own timeout is
    /// turned off, since the Laharsub client times each request itself and a long poll outlasts the
    /// default 100 s; a <see cref="TimeProvider"/> registered in the container becomes the client's clock
    /// unless <paramref name="configure"/> sets one.
    /// </summary>
    /// <remarks>
    /// Like every typed client the <see cref="LaharsubClient"/> is transient: resolve it once where a
    /// subscription should live (a hosted service's constructor), since disposing it, as its scope does,
    /// stops its subscriptions. A resilience handler added to the returned builder must let long polls
    /// wait: see docs/dotnet-client.md, "Behind a resilience handler".
    /// </remarks>
    /// <param name="services">The container.</param>
    /// <param name="configure">Sets the address and the client's options.</param>
    /// <returns>The HTTP client's builder, to add message handlers (such as a resilience handler) to.</returns>
    public static IHttpClientBuilder AddLaharsubClient(this IServiceCollection services, Action<LaharsubClientOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(configure);
        const string name = nameof(LaharsubClient);
        services.AddOptions<LaharsubClientOptions>(name)
            .Configure(configure)
            .PostConfigure<IServiceProvider>(static (options, provider) =>
            {
                if (!options.TimeProviderSet && provider.GetService<TimeProvider>() is { } clock)
                {
                    options.TimeProvider = clock;
                }
            })
            .Validate(static options => options.ApiAddress is not null,
                "LaharsubClientOptions.ApiAddress is not set: set it to the Laharsub API root, e.g. http://localhost:5000/ps/.")
            .ValidateOnStart();
        return services.AddHttpClient(name)
            .ConfigureHttpClient(static http => http.Timeout = Timeout.InfiniteTimeSpan)
            .AddTypedClient(static (http, provider) =>
            {
                var options = provider.GetRequiredService<IOptionsMonitor<LaharsubClientOptions>>().Get(name);
                return new LaharsubClient(http, [options.ApiAddress!], options);
            });
    }
}
