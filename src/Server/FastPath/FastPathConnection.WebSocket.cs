using Laharsub.Server.Access;
using System.Buffers;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;
using Laharsub.Server.Delivery;
using Laharsub.Server.Limits;
using Laharsub.Server.Transport;
using Microsoft.AspNetCore.Connections;

namespace Laharsub.Server.FastPath;

/// <summary>A WebSocket: the handshake's <c>101</c>, then the transport's session over the connection's pipes.</summary>
internal sealed partial class FastPathConnection
{
    /// <summary>
    /// Accepts a WebSocket and runs its session (the pipeline's own, over the connection's pipes) until it
    /// closes, or returns null, having consumed nothing, for Kestrel to take the connection: a query the
    /// pipeline refuses with a problem, or a client at its waiting-poll cap.
    /// </summary>
    private async ValueTask<Served?> WebSocketAsync(SequencePosition headEnd)
    {
        if (!await AllowsSubscriptionAsync().ConfigureAwait(false))
        {
            return null;
        }
        Subscription[] initial;
        Conflation conflation;
        PresenceIdentity? member;
        IDisposable? permit;
        var subscriptions = t_subscriptions ??= [];
        try
        {
            var query = ParseQuery(subscriptions);
            // As the pipeline does: a query that names no topic opens a socket whose frames subscribe later.
            if ((query.Error is not null && !query.NamesNoTopic) || !TryAcquireWaitingPoll(out permit))
            {
                _pipelineReason ??= "query_invalid";
                return null;
            }
            initial = query.Error is null ? [.. subscriptions] : [];
            conflation = query.Conflation;
            member = PresenceOf(query);
        }
        finally
        {
            subscriptions.Clear();
        }
        _input.AdvanceTo(headEnd);
        _state.Metrics.FastPath("websocket");
        var started = _state.Hosting.Started("GET");
        StartRequestActivity("GET", _state.PollRoute);
        using (permit)
        {
            try
            {
                var handshake = new WebSocketHandshake(_webSocketProtocols, _state.Subscriptions);
                _state.Responses.WriteWebSocketAccept(_output, WebSocketAcceptKey(_webSocketKey!), handshake.SubProtocol,
                    _origin ? _state.WebSocketOriginHeaders : []);
                var socket = WebSocket.CreateFromStream(new ConnectionStream(_input, _output), handshake.CreationOptions());
                await WebSocketSession.RunAsync(socket, new Caller(_connection, _state.Tokens?.Access, _permissions, _identity?.ExpiresAt, _state.RateLimit, RateLimitKey()), _state.Subscriptions, initial, conflation, member).ConfigureAwait(false);
            }
            finally
            {
                _state.Hosting.Ended("GET", _state.PollRoute, 101, started, EndRequestActivity());
            }
        }
        return Served.Close;
    }

    /// <summary><c>Sec-WebSocket-Accept</c>: the key and RFC 6455's GUID, hashed with SHA-1, in base64.</summary>
    private static byte[] WebSocketAcceptKey(string key)
    {
        Span<byte> text = stackalloc byte[24 + 36];
        Encoding.ASCII.GetBytes(key, text);
        "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"u8.CopyTo(text[24..]);
        Span<byte> hash = stackalloc byte[20];
        // RFC 6455 fixes SHA-1 for the handshake, which proves only that the server read the key.
#pragma warning disable CA5350
        SHA1.HashData(text, hash);
#pragma warning restore CA5350
        return Encoding.ASCII.GetBytes(Convert.ToBase64String(hash));
    }

    /// <summary>
    /// A socket's caller on the fast path: in Jwt mode, its frames are allowed by the grants it connected with, and it
    /// ends when its token expires; its publish frames draw on the bucket of the client that opened it.
    /// </summary>
    private sealed class Caller(ConnectionContext connection, TopicAccess? access, LaharsubPermissions? permissions, DateTimeOffset? expiresAt,
        ClientRateLimit rateLimit, string? rateLimitKey) : IWebSocketCaller
    {
        public CancellationToken Gone => connection.ConnectionClosed;

        public async ValueTask<bool> AllowsAsync(LaharsubOperation operation, long topicId) =>
            permissions is null || await access!.CheckAsync(new AccessCaller(permissions), operation, topicId, connection.ConnectionClosed).ConfigureAwait(false) is null;

        public bool TryAcquire(out int retryAfterSeconds) => rateLimit.TryAcquire(rateLimitKey, out retryAfterSeconds);

        public ValueTask<StreamLifetime?> LifetimeAsync() =>
            ValueTask.FromResult(expiresAt is { } at ? new StreamLifetime(at, Redecide: false) : (StreamLifetime?)null);

        public void Abort() => connection.Abort(new ConnectionAbortedException("The socket's client did not read within Streams:MaxWriteWait."));
    }
}
