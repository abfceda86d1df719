using Laharsub.Server.Delivery;

namespace Laharsub.Server.Transport;

/// <summary>How each transport paces its deliveries (docs/protocol.md, "Conflation"), on either front-end.</summary>
internal static class TransportPacing
{
    /// <summary>
    /// A long poll's pacing: its conflation interval counts from its arrival, the server keeping nothing
    /// between polls; no batching window, which is for streams.
    /// </summary>
    public static Pacing LongPoll(in SubscriptionQuery query) => new(query.Conflation, IntervalFromStart: true);

    /// <summary>A stream's (SSE or WebSocket): the subscriber's conflation, counted from each delivery, and the server's batching window.</summary>
    public static Pacing Stream(SubscriptionServices services, Conflation conflation) => new(conflation, services.Streams.BatchWindow);
}
