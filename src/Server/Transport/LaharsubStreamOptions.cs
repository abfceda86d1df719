using System.ComponentModel.DataAnnotations;

namespace Laharsub.Server;

/// <summary>
/// The streaming transports' settings (Server-Sent Events and WebSocket), bound from <c>Laharsub:Streams</c>.
/// </summary>
public sealed class LaharsubStreamOptions
{
    /// <summary>
    /// How often a quiet SSE stream writes a heartbeat comment: proxies keep the connection, and a client
    /// that hears nothing for longer knows a proxy buffers the stream.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:01", "00:10:00")]
    public TimeSpan HeartbeatInterval { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>The SSE <c>retry:</c> a browser's EventSource waits before it reconnects.</summary>
    [Range(typeof(TimeSpan), "00:00:00.100", "00:10:00")]
    public TimeSpan ReconnectDelay { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>How often the server pings an open WebSocket.</summary>
    [Range(typeof(TimeSpan), "00:00:01", "00:10:00")]
    public TimeSpan KeepAliveInterval { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>
    /// How long a write to a stream may wait for a client that does not read before the stream is ended
    /// (it reconnects and resumes from its cursors; meanwhile it holds at most <see cref="MaxBufferedBytes"/> of its delivery).
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:01", "01:00:00")]
    public TimeSpan MaxWriteWait { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Batching for streams (SSE and WebSocket): after the first message of a quiet stream arrives, how long
    /// the stream waits before reading, so that what arrives meanwhile goes out in the same write. Trades
    /// that much latency for fewer, larger writes; zero (the default) writes as soon as a message arrives.
    /// </summary>
    [Range(typeof(TimeSpan), "00:00:00", "00:00:01")]
    public TimeSpan BatchWindow { get; set; } = TimeSpan.Zero;

    /// <summary>
    /// The most bytes of one delivery a stream writes before it waits for them to be sent (SSE: it flushes;
    /// a WebSocket sends each message as it is written): what a stream whose client does not read holds,
    /// besides the transport's own buffer (<c>Kestrel:Sockets:MaxWriteBufferSize</c>, 64 KiB) and the one
    /// message being written, until <see cref="MaxWriteWait"/> ends it.
    /// </summary>
    [Range(4 * 1024, 64 * 1024 * 1024)]
    public int MaxBufferedBytes { get; set; } = 64 * 1024;

    /// <summary>The largest frame a WebSocket client may send (a publish's body is at most <c>MaxMessageBytes</c>, base64 a third more).</summary>
    [Range(1024, 64 * 1024 * 1024)]
    public int MaxReceiveFrameBytes { get; set; } = 1024 * 1024;
}
