using Laharsub.Server.Access;
using Laharsub.Server.Delivery;
using Laharsub.Server.Transport;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Endpoints;

/// <summary>The subscription as a WebSocket, subprotocol <c>laharsub.v1</c> (docs/protocol.md, "WebSocket"): the pipeline accepts it, <see cref="WebSocketSession"/> runs it.</summary>
internal static partial class SubscriptionEndpoints
{
    private static async Task RunWebSocketAsync(HttpContext context, SubscriptionServices services, Subscription[] initial, Conflation conflation, PresenceIdentity? member)
    {
        var handshake = new WebSocketHandshake(context.Request.Headers.SecWebSocketProtocol.ToString(), services);
        var socket = await context.WebSockets.AcceptWebSocketAsync(handshake.AcceptContext()).ConfigureAwait(false);
        await WebSocketSession.RunAsync(socket, new RequestCaller(context, services), services, initial, conflation, member).ConfigureAwait(false);
    }

    /// <summary>The pipeline's caller: its request's access checks, rate limit and token.</summary>
    private sealed class RequestCaller(HttpContext context, SubscriptionServices services) : IWebSocketCaller
    {
        public CancellationToken Gone => context.RequestAborted;

        public ValueTask<bool> AllowsAsync(LaharsubOperation operation, long topicId) => services.Access.AllowsAsync(context, operation, topicId);

        public bool TryAcquire(out int retryAfterSeconds) => services.RateLimit.TryAcquire(context, out retryAfterSeconds);

        public ValueTask<StreamLifetime?> LifetimeAsync() => services.Access.StreamLifetimeAsync(context, services.TimeProvider);

        public void Abort() => context.Abort();
    }
}
