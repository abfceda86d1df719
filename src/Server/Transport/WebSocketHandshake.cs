using System.Net.WebSockets;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Transport;

/// <summary>
/// A WebSocket's handshake as both front-ends answer it: the subprotocol chosen from the client's offer, and the
/// keep-alive the socket then runs with. The pipeline hands them to <c>UseWebSockets()</c>, which writes the <c>101</c>
/// (<see cref="AcceptContext"/>); the fast path writes the same <c>101</c> naming <see cref="SubProtocol"/> and creates
/// its socket with the same settings (<see cref="CreationOptions"/>).
/// </summary>
internal readonly struct WebSocketHandshake
{
    /// <summary>The subprotocol the server selects when a client offers it.</summary>
    public const string Protocol = "laharsub.v1";

    private readonly TimeSpan _keepAliveInterval;
    private readonly TimeSpan _keepAliveTimeout;

    /// <summary>The handshake of a client that offered <paramref name="offered"/> (its <c>Sec-WebSocket-Protocol</c>, or nothing).</summary>
    public WebSocketHandshake(ReadOnlySpan<char> offered, SubscriptionServices services)
    {
        SubProtocol = Choose(offered);
        _keepAliveInterval = services.Streams.KeepAliveInterval;
        _keepAliveTimeout = services.WebSocketKeepAliveTimeout;
    }

    /// <summary>The subprotocol the <c>101</c> names, or null to name none.</summary>
    public string? SubProtocol { get; }

    /// <summary>The pipeline's accept; the pong's timeout is left to the options its <c>UseWebSockets()</c> was given.</summary>
    public WebSocketAcceptContext AcceptContext() => new()
    {
        SubProtocol = SubProtocol,
        KeepAliveInterval = _keepAliveInterval,
    };

    /// <summary>
    /// The socket the fast path creates on the connection once its <c>101</c> is written, with the pong's timeout of
    /// <c>UseWebSockets()</c>'s options from the services (the fast path takes sockets only for a host whose pipeline uses those).
    /// </summary>
    public WebSocketCreationOptions CreationOptions() => new()
    {
        IsServer = true,
        SubProtocol = SubProtocol,
        KeepAliveInterval = _keepAliveInterval,
        KeepAliveTimeout = _keepAliveTimeout,
    };

    /// <summary><see cref="Protocol"/> when the client's <c>Sec-WebSocket-Protocol</c> (a comma-separated list) offers it, else none.</summary>
    private static string? Choose(ReadOnlySpan<char> offered)
    {
        foreach (var range in offered.Split(','))
        {
            if (offered[range].Trim(" \t").SequenceEqual(Protocol))
            {
                return Protocol;
            }
        }
        return null;
    }
}
