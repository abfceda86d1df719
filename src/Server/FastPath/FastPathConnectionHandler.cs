using System.Text;
using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Limits;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.FastPath;

/// <summary>
/// Kestrel connection middleware that serves Laharsub's hot requests (the JSON long poll and the publish)
/// itself, from the connection's pipes, and gives the connection to Kestrel's HTTP handling, unread, at the
/// first request it does not take: that request and every later one on the connection are served by the
/// application's pipeline, as they would have been without the fast path.
/// </summary>
/// <remarks>
/// The fast path takes a request only when its answer cannot differ from the pipeline's: HTTP/1.1 over a
/// plain connection, a caller whose grants allow it (Jwt mode: anonymous, or a token the pipeline validated before), no CORS
/// the pipeline decides by the origin, one <c>X-Forwarded-For</c> at most (read by the pipeline's rule,
/// <see cref="TrustForwardedHeaders"/>), no upgrade headers (but a WebSocket's handshake, see <see cref="ServeWebSockets"/>), a query the
/// poll parser accepts, and (for a publish) a whole body within the limits, a permit of its client's rate limit
/// when that is on, and a store call that succeeds. A publish refused by either changed nothing, so it is handed
/// over too and the pipeline answers it.
/// </remarks>
internal sealed partial class FastPathConnectionHandler
{
    private readonly IServiceProvider _services;
    private State? _state;
    private object? _stateLock;

    public FastPathConnectionHandler(IServiceProvider services) => _services = services;

    /// <summary>
    /// The URL prefix MapLaharsub mapped, which the fast path serves; until it is set (an application that
    /// never maps Laharsub), every connection goes straight to Kestrel.
    /// </summary>
    public string? Prefix { get; private set; }

    private ForwardedHeadersOptions? _forwardedHeaders;

    /// <summary>
    /// Called by a host whose pipeline applies the forwarded headers with <paramref name="options"/>
    /// (<c>UseForwardedHeaders(options)</c>, as the standalone server does for <c>Laharsub:ForwardedHeaders:KnownProxies</c>):
    /// the fast path finds the client of a request with <c>X-Forwarded-For</c> by the same options and rule
    /// (<see cref="ForwardedClient"/>), for the waiting-poll cap and the rate limit. Without this call the header
    /// changes nothing here, as nothing in the pipeline reads it. Called before the server starts.
    /// </summary>
    public void TrustForwardedHeaders(ForwardedHeadersOptions options) => _forwardedHeaders = options;

    private bool _pipelineServesWebSockets;
    private bool _corsAllowsAnyOrigin;

    /// <summary>
    /// Called by a host whose pipeline accepts WebSockets (<c>UseWebSockets()</c>) and runs Laharsub's CORS
    /// policy on requests that carry <c>Origin</c> (<c>UseCors()</c>), as the standalone server's does: then the
    /// fast path accepts WebSocket upgrades itself, answering as that pipeline would (with
    /// <paramref name="corsAllowsAnyOrigin"/> off, upgrades that carry <c>Origin</c> stay the pipeline's, which
    /// decides by the origin). Without this call the pipeline accepts every socket. Called before the server starts.
    /// </summary>
    public void ServeWebSockets(bool corsAllowsAnyOrigin)
    {
        _pipelineServesWebSockets = true;
        _corsAllowsAnyOrigin = corsAllowsAnyOrigin;
    }

    /// <summary>
    /// Called by MapLaharsub: the fast path serves the poll and publish URLs under <paramref name="prefix"/>, unless
    /// the host's conventions on Laharsub's endpoints make them the pipeline's (<see cref="HostConventions"/>); the
    /// start log says which.
    /// </summary>
    public void Serve(string prefix)
    {
        if (Prefix is not null)
        {
            return;
        }
        Prefix = prefix.TrimEnd('/');
        // Decided once every endpoint is mapped and the pipeline is built, before the first request is likely;
        // a connection that comes earlier decides it itself.
        _services.GetRequiredService<IHostApplicationLifetime>().ApplicationStarted.Register(() => _ = GetState());
    }

    private State GetState() => LazyInitializer.EnsureInitialized(ref _state, ref _stateLock, () =>
    {
        var state = new State(_services, Prefix!, _forwardedHeaders, _pipelineServesWebSockets, _corsAllowsAnyOrigin);
        if (state.PipelineOnly.Count > 0)
        {
            StepsAside(state.Logger, Prefix!, string.Join("; ", state.PipelineOnly));
        }
        else
        {
            Serves(state.Logger, Prefix!);
        }
        return state;
    });

    public Task OnConnectionAsync(ConnectionContext connection, ConnectionDelegate kestrel)
    {
        if (Prefix is null)
        {
            return kestrel(connection);
        }
        var state = GetState();
        // Host filtering (AllowedHosts), what the host added to Laharsub's endpoints, the 429 of a connection
        // over its client's cap, and hosting's diagnostic events (they carry the HttpContext; a subscriber such as
        // OpenTelemetry's ASP.NET Core instrumentation usually stays for the process's life) live in the pipeline.
        var declined = state.ApplicationDecides ? "application_authorization"
            : state.HostsFiltered ? "allowed_hosts"
            : state.PipelineOnly.Count > 0 ? "host_conventions"
            : state.Hosting.DiagnosticsListened ? "diagnostic_listener"
            : ClientConnectionLimit.IsOverLimit(connection) ? "connection_cap"
            : null;
        if (declined is not null)
        {
            state.Metrics.FastPath("handed_over", declined);
            return kestrel(connection);
        }
        return new FastPathConnection(state, connection, kestrel).RunAsync();
    }

    /// <summary>What every fast-path connection shares: the services, settings and prepared bytes.</summary>
    internal sealed class State
    {
        public State(IServiceProvider services, string prefix, ForwardedHeadersOptions? forwardedHeaders, bool pipelineServesWebSockets, bool corsAllowsAnyOrigin)
        {
            Runner = services.GetRequiredService<SubscriptionRunner>();
            Wire = services.GetRequiredService<WireFormat>();
            Delivery = services.GetRequiredService<IOptions<LaharsubDeliveryOptions>>().Value;
            Store = services.GetRequiredService<ILaharsubStore>();
            StoreOptions = services.GetRequiredService<IOptions<LaharsubStoreOptions>>().Value;
            Lifetime = services.GetRequiredService<IHostApplicationLifetime>();
            Metrics = services.GetRequiredService<LaharsubMetrics>();
            Clock = services.GetRequiredService<TimeProvider>();
            WaitingPolls = services.GetRequiredService<WaitingPollLimit>();
            RateLimit = services.GetRequiredService<ClientRateLimit>();
            var loggers = services.GetRequiredService<ILoggerFactory>();
            // Only the caps and the rate limit count by the client's address: without them the header changes nothing.
            Forwarded = forwardedHeaders is not null && (WaitingPolls.Enabled || RateLimit.Enabled) ? new ForwardedClient(forwardedHeaders, loggers) : null;
            Logger = loggers.CreateLogger<FastPathConnectionHandler>();
            var auth = services.GetRequiredService<IOptions<LaharsubAuthOptions>>().Value;
            if (auth.Mode == LaharsubAuthMode.Jwt)
            {
                Tokens = new TokenCallers(services.GetRequiredService<AccessTokenCache>(), services.GetRequiredService<AccessControl>().Anonymous,
                    services.GetRequiredService<TopicAccess>());
            }
            HostsFiltered = services.GetRequiredService<IConfiguration>()["AllowedHosts"] is { Length: > 0 } allowed && allowed != "*";
            ApplicationDecides = auth.Mode is LaharsubAuthMode.Host or LaharsubAuthMode.Backend;
            PipelineOnly = [.. HostConventions.PipelineOnlyReasons(
                services.GetRequiredService<EndpointDataSource>().Endpoints,
                services.GetRequiredService<IOptions<AuthorizationOptions>>().Value.FallbackPolicy),
                .. ApplicationDecides ? [$"Laharsub:Auth:Mode is {auth.Mode}: the application decides each request, in the pipeline"] : Array.Empty<string>()];
            var kestrel = services.GetRequiredService<IOptions<KestrelServerOptions>>().Value;
            Limits = kestrel.Limits;
            MaxHeadBytes = Limits.MaxRequestLineSize + Limits.MaxRequestHeadersTotalSize;
            PartialRequestWait = TimeSpan.FromTicks(Math.Min(Limits.RequestHeadersTimeout.Ticks,
                (Limits.MinRequestBodyDataRate?.GracePeriod ?? TimeSpan.FromSeconds(5)).Ticks));
            Responses = new FastPathResponses(Clock, kestrel.AddServerHeader);
            PollPath = Encoding.ASCII.GetBytes(prefix + "/subscriptions");
            PollRoute = prefix + "/subscriptions";
            PublishRoute = prefix + "/topics/{topicId}";
            Hosting = new HostingTelemetry(services);
            Subscriptions = new SubscriptionServices(services);
            TopicsPathText = prefix + "/topics/";
            TopicsPath = Encoding.ASCII.GetBytes(TopicsPathText);
            TakesWebSockets = pipelineServesWebSockets;
            var webSockets = services.GetRequiredService<IOptions<WebSocketOptions>>().Value;
            OriginHeaders = corsAllowsAnyOrigin ? FastPathResponses.AnyOriginHeaders(services) : null;
            WebSocketOriginHeaders = webSockets.AllowedOrigins.Count == 0 ? OriginHeaders : null;
        }

        public HttpParser<FastPathConnection> Parser { get; } = new(showErrorDetails: false);
        public SubscriptionRunner Runner { get; }
        public WireFormat Wire { get; }
        public LaharsubDeliveryOptions Delivery { get; }
        public ILaharsubStore Store { get; }
        public LaharsubStoreOptions StoreOptions { get; }
        public IHostApplicationLifetime Lifetime { get; }
        public LaharsubMetrics Metrics { get; }
        public TimeProvider Clock { get; }
        public WaitingPollLimit WaitingPolls { get; }

        /// <summary>The client's bucket of <c>Laharsub:RateLimit</c>, shared with the pipeline's rate limiter and the sockets' publish frames.</summary>
        public ClientRateLimit RateLimit { get; }

        /// <summary>
        /// Who a request's <c>X-Forwarded-For</c> says the client is (<see cref="TrustForwardedHeaders"/>); null when the
        /// header changes nothing the fast path counts: no proxy trusted, or neither the waiting-poll cap nor the rate limit on.
        /// </summary>
        public ForwardedClient? Forwarded { get; }
        public ILogger Logger { get; }

        /// <summary>Host and Backend modes: the application decides each request (its authentication, or its endpoint), in the pipeline alone.</summary>
        public bool ApplicationDecides { get; }

        /// <summary>Jwt mode's callers (null in Open mode): tokens the pipeline validated, anonymous callers' grants, and the decision.</summary>
        public TokenCallers? Tokens { get; }

        /// <summary>
        /// Why Laharsub's endpoints are the pipeline's alone (what the host added to them, or its fallback
        /// authorization policy); empty when the fast path may serve them.
        /// </summary>
        public IReadOnlyList<string> PipelineOnly { get; }

        /// <summary>Whether ASP.NET Core's host filtering refuses some Host headers (<c>AllowedHosts</c> other than <c>*</c>).</summary>
        public bool HostsFiltered { get; }
        public KestrelServerLimits Limits { get; }
        public long MaxHeadBytes { get; }

        /// <summary>
        /// How long the rest of a request that arrived in part may take to arrive before Kestrel takes the
        /// connection (and applies its own timeouts): the shorter of Kestrel's request headers timeout and
        /// its body data rate's grace period.
        /// </summary>
        public TimeSpan PartialRequestWait { get; }
        public FastPathResponses Responses { get; }

        /// <summary><c>{prefix}/subscriptions</c>: the poll's path.</summary>
        public byte[] PollPath { get; }

        /// <summary><c>{prefix}/topics/</c>: a publish's path is this and the topic's id.</summary>
        public byte[] TopicsPath { get; }
        public string TopicsPathText { get; }

        /// <summary>The poll's and the publish's route patterns, as the pipeline's endpoints name them in hosting's metrics.</summary>
        public string PollRoute { get; }
        public string PublishRoute { get; }

        /// <summary>Hosting's request metrics and request activities.</summary>
        public HostingTelemetry Hosting { get; }

        /// <summary>What polls, streams and sockets use, on the fast path as on the pipeline.</summary>
        public SubscriptionServices Subscriptions { get; }

        /// <summary>Whether WebSocket upgrades are the fast path's to accept (<see cref="ServeWebSockets"/>).</summary>
        public bool TakesWebSockets { get; }

        /// <summary>
        /// The CORS headers the pipeline adds to an answer to a request that carries <c>Origin</c>, where they are the
        /// same for every origin (the host runs Laharsub's CORS policy and it allows any origin); null where the
        /// pipeline decides by the origin, so that such requests are its own.
        /// </summary>
        public byte[]? OriginHeaders { get; }

        /// <summary>
        /// The CORS headers the pipeline adds to a WebSocket's <c>101</c> when the upgrade carries <c>Origin</c>;
        /// null when the pipeline decides by the origin (a list of allowed origins), so that such upgrades are its own.
        /// </summary>
        public byte[]? WebSocketOriginHeaders { get; }

        /// <summary>The content type last published with, so that a publisher sending the same one again costs no string.</summary>
        public string? LastContentType;
    }
}
