using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Limits;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Transport;

/// <summary>What polls, streams and sockets use, resolved once (by the endpoints and by the fast path).</summary>
internal sealed class SubscriptionServices(IServiceProvider services)
{
    public SubscriptionRunner Runner { get; } = services.GetRequiredService<SubscriptionRunner>();
    public WireFormat Wire { get; } = services.GetRequiredService<WireFormat>();
    public LaharsubDeliveryOptions Options { get; } = services.GetRequiredService<IOptions<LaharsubDeliveryOptions>>().Value;
    public LaharsubStreamOptions Streams { get; } = services.GetRequiredService<IOptions<LaharsubStreamOptions>>().Value;
    public ILaharsubStore Store { get; } = services.GetRequiredService<ILaharsubStore>();
    public LaharsubStoreOptions StoreOptions { get; } = services.GetRequiredService<IOptions<LaharsubStoreOptions>>().Value;
    public AccessControl Access { get; } = services.GetRequiredService<AccessControl>();
    public IHostApplicationLifetime Lifetime { get; } = services.GetRequiredService<IHostApplicationLifetime>();
    public LaharsubMetrics Metrics { get; } = services.GetRequiredService<LaharsubMetrics>();
    public TimeProvider TimeProvider { get; } = services.GetRequiredService<TimeProvider>();
    public ClientRateLimit RateLimit { get; } = services.GetRequiredService<ClientRateLimit>();

    /// <summary>How long a socket waits for the pong of its keep-alive ping: <c>UseWebSockets()</c>'s setting, on both front-ends.</summary>
    public TimeSpan WebSocketKeepAliveTimeout { get; } = services.GetRequiredService<IOptions<WebSocketOptions>>().Value.KeepAliveTimeout;

    /// <summary>Jwt mode: a subscriber's presence identity is its token's subject (docs/protocol.md, "Identity").</summary>
    public bool IdentityFromToken { get; } = services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value.Mode == LaharsubAuthMode.Jwt;
}
