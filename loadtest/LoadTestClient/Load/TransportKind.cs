namespace Laharsub.LoadTestClient.Load;

/// <summary>How each simulated client receives its topics (--transport).</summary>
internal enum TransportKind
{
    /// <summary>One long poll after another on a raw HTTP/1.1 connection (<see cref="RawPoller"/>).</summary>
    LongPoll,

    /// <summary>One Server-Sent Events stream, read off a raw HTTP/1.1 connection (<see cref="RawEventStream"/>).</summary>
    Sse,

    /// <summary>One WebSocket (<see cref="SocketSubscriber"/>); against Laharsub and the floor the client also publishes on it.</summary>
    WebSocket,
}

internal static class Transports
{
    public static readonly string[] Names = ["longpoll", "sse", "websocket"];

    /// <summary>The name the command line and the reports use: longpoll, sse, websocket.</summary>
    public static string Name(TransportKind transport) => transport switch
    {
        TransportKind.Sse => "sse",
        TransportKind.WebSocket => "websocket",
        _ => "longpoll",
    };

    /// <summary>Whether the transport is a stream (held open, the server writes each delivery), not a poll.</summary>
    public static bool IsStream(TransportKind transport) => transport != TransportKind.LongPoll;

    /// <summary>Whether publishes travel on the client's own socket rather than as REST requests.</summary>
    public static bool PublishesOnSocket(TargetKind target, TransportKind transport) =>
        transport == TransportKind.WebSocket && target.SpeaksLaharsub();
}
