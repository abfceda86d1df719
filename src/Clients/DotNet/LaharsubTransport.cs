namespace Laharsub.Client;

/// <summary>How a subscription receives its messages (<see cref="LaharsubClientOptions.Transport"/>).</summary>
public enum LaharsubTransport
{
    /// <summary>
    /// The default: a WebSocket, else Server-Sent Events, else long polling. The subscription moves on
    /// to the next when one cannot be established: the server or a proxy refuses the WebSocket upgrade
    /// or the event stream (any answer that is not the stream, other than the errors every transport
    /// would get, such as <c>401</c>, <c>403</c>, <c>429</c> or <c>5xx</c>), or the stream does not start
    /// within <see cref="LaharsubClientOptions.RequestTimeout"/> (a proxy that buffers it). It stays with
    /// the transport it found for as long as it runs.
    /// </summary>
    Auto,

    /// <summary>
    /// One WebSocket (subprotocol <c>laharsub.v1</c>) per subscription: the server pushes every message
    /// as it is published, topics are added and removed with frames on the open socket, and
    /// <see cref="LaharsubSubscription.PublishAsync(long, ReadOnlyMemory{byte}, string, PublishOptions?, CancellationToken)"/> publishes on it.
    /// </summary>
    WebSocket,

    /// <summary>
    /// One Server-Sent Events stream (<c>Accept: text/event-stream</c>) per subscription: the server
    /// pushes every message as it is published; adding or removing a topic opens the stream again from the
    /// subscription's cursors.
    /// </summary>
    ServerSentEvents,

    /// <summary>One long poll at a time per subscription, sent again after each answer: the original transport, which any HTTP path carries.</summary>
    LongPolling,
}
