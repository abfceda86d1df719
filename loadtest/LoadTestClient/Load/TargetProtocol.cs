namespace Laharsub.LoadTestClient.Load;

/// <summary>The servers the generator can measure.</summary>
internal enum TargetKind
{
    /// <summary>This repository's server.</summary>
    Laharsub,

    /// <summary>nginx with the nchan module (loadtest/peers/nchan.conf): the reference the issue races against.</summary>
    Nchan,

    /// <summary>
    /// loadtest/Floor: Laharsub's wire (the part this tool uses) on ASP.NET Core's default request path and
    /// nothing else, so that Laharsub's own cost over the framework's shows.
    /// </summary>
    Floor,
}

internal static class Targets
{
    /// <summary>Whether the target speaks Laharsub's wire protocol: its API under /ps/, topics created, publishes on a socket.</summary>
    public static bool SpeaksLaharsub(this TargetKind target) => target is TargetKind.Laharsub or TargetKind.Floor;
}

/// <summary>
/// What differs between the servers the generator measures: where a publish goes and how its answer
/// reads, where a poll goes and how its request and answer look. The workload, the schedule, the
/// raw-socket polls and the delivery checks are the same for every target.
/// </summary>
internal abstract class TargetProtocol
{
    public static TargetProtocol For(LoadPlan plan) => plan.Target switch
    {
        TargetKind.Laharsub or TargetKind.Floor => new LaharsubProtocol(plan),
        TargetKind.Nchan => new NchanProtocol(plan),
        _ => throw new ArgumentOutOfRangeException(nameof(plan), plan.Target, "Unknown target."),
    };

    /// <summary>Where polls go (without a query) on the instance whose API root is <paramref name="apiAddress"/>.</summary>
    public abstract Uri PollAddressAt(Uri apiAddress);

    /// <summary>
    /// Whether the target numbers each topic's messages 1, 2, 3, ... (so a skipped id is a lost
    /// message), or only in increasing order with holes (nchan: a message is lost only if it is
    /// missing at the end).
    /// </summary>
    public abstract bool ConsecutiveMessageIds { get; }

    /// <summary>The publish request's path for a topic, relative to <see cref="LoadPlan.ApiAddress"/>.</summary>
    public abstract string PublishPath(long topicId);

    /// <summary>The Accept header of a publish, or null for none.</summary>
    public abstract string? PublishAccept { get; }

    public abstract bool IsPublishAccepted(int status);

    /// <summary>
    /// The id, in the target's order, of the message a successful publish answer reports: a subscriber
    /// whose cursor is past it has caught up.
    /// </summary>
    public abstract long ReadPublishedId(ReadOnlySpan<byte> answer);

    /// <summary>Client <paramref name="client"/>'s poll requests and the reading of their answers; <paramref name="token"/> is its JWT in Jwt mode.</summary>
    public abstract IPollWire CreatePollWire(IReadOnlyList<Measurement.DeliveryVerifier> topics, int client = 0, string? token = null);

    /// <summary>Client <paramref name="client"/>'s Server-Sent Events stream (<c>--transport sse</c>): its request and the reading of its events.</summary>
    public abstract IEventStreamWire CreateEventStreamWire(IReadOnlyList<Measurement.DeliveryVerifier> topics, int client = 0, string? token = null);

    /// <summary>Client <paramref name="client"/>'s WebSocket (<c>--transport websocket</c>): its address and the reading of its frames.</summary>
    public abstract IWebSocketWire CreateWebSocketWire(IReadOnlyList<Measurement.DeliveryVerifier> topics, int client = 0, string? token = null);
}

/// <summary>What a stream's event or frame meant for the stream itself, beyond the deliveries it held.</summary>
internal enum StreamSignal
{
    None,

    /// <summary>The stream is subscribed (Laharsub's <c>open</c> event and first <c>subscribed</c> frame).</summary>
    Opened,

    /// <summary>The server asks the client to reconnect and resume (Laharsub's <c>reconnect</c> event).</summary>
    Reconnect,
}

/// <summary>One simulated client's Server-Sent Events stream, as a target speaks it.</summary>
internal interface IEventStreamWire
{
    /// <inheritdoc cref="IRawPollHandler.TryWriteQuery"/>
    bool TryWriteQuery(Span<byte> destination, out int written);

    /// <inheritdoc cref="IRawPollHandler.TryWriteHeaders"/>
    bool TryWriteHeaders(Span<byte> destination, out int written);

    /// <summary>Whether the stream is subscribed once its 200 head arrives (nchan), rather than at an event that says so.</summary>
    bool OpenAtHead { get; }

    /// <summary>Reads one event into <paramref name="sink"/>, moving the cursors past it.</summary>
    StreamSignal Read(in ServerSentEvent sse, IPollResponseSink sink);
}

/// <summary>Receives what a stream holds beyond deliveries: the answers to publishes sent on a WebSocket.</summary>
internal interface IStreamSink : IPollResponseSink
{
    /// <summary>A publish frame was stored as <paramref name="messageId"/>; <paramref name="id"/> is the frame's own id.</summary>
    void OnPublished(ReadOnlySpan<byte> id, long messageId);

    /// <summary>A frame was refused with <paramref name="status"/>; <paramref name="id"/> is empty when the refusal answers no frame of the client's.</summary>
    void OnRefused(ReadOnlySpan<byte> id, int status);
}

/// <summary>One simulated client's WebSocket, as a target speaks it.</summary>
internal interface IWebSocketWire
{
    string SubProtocol { get; }

    /// <summary>Where to connect now (<c>ws://</c>), with the client's cursors: a reconnect resumes where it left off.</summary>
    Uri Address(Uri pollAddress);

    /// <summary>Whether the socket is subscribed once the handshake is done (nchan), rather than at a frame that says so.</summary>
    bool OpenAtConnect { get; }

    /// <summary>Sets the upgrade request's headers beyond the handshake's own (a page's <c>Origin</c>).</summary>
    void SetRequestHeaders(System.Net.WebSockets.ClientWebSocketOptions options)
    {
    }

    /// <summary>Reads one whole frame (a text frame unless <paramref name="binary"/>) into <paramref name="sink"/>.</summary>
    StreamSignal Read(ReadOnlySpan<byte> frame, bool binary, IStreamSink sink);

    /// <summary>
    /// Writes a frame that publishes <paramref name="body"/> to <paramref name="topicId"/>, with
    /// <paramref name="sequence"/> as its id; false when <paramref name="destination"/> is too small.
    /// </summary>
    /// <exception cref="NotSupportedException">The target takes no publishes on this socket.</exception>
    bool TryWritePublish(Span<byte> destination, long sequence, long topicId, ReadOnlySpan<byte> body, out int written);
}

/// <summary>One simulated client's poll, as a target speaks it: request, timeout status and the reading of an answer.</summary>
internal interface IPollWire
{
    /// <summary>The Accept header of every poll.</summary>
    string Accept { get; }

    /// <inheritdoc cref="IRawPollHandler.TryWriteQuery"/>
    bool TryWriteQuery(Span<byte> destination, out int written);

    /// <inheritdoc cref="IRawPollHandler.TryWriteHeaders"/>
    bool TryWriteHeaders(Span<byte> destination, out int written);

    /// <summary>The status of a poll that waited its whole timeout and holds nothing.</summary>
    bool IsEmpty(int status);

    /// <summary>Reads a 200 answer into <paramref name="sink"/> and moves the cursors past it.</summary>
    void Read(in RawPollResponse response, IPollResponseSink sink);
}
