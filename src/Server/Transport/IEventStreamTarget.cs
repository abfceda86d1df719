using System.Buffers;

namespace Laharsub.Server.Transport;

/// <summary>
/// Where a Server-Sent Events stream goes: the HTTP response on the pipeline, or the connection itself on
/// the fast path, which frames the events as the pipeline's response would (docs/architecture.md).
/// </summary>
internal interface IEventStreamTarget
{
    /// <summary>Where the stream's next events are written; <see cref="SendAsync"/> sends them.</summary>
    IBufferWriter<byte> Events { get; }

    /// <summary>Ends when the client goes away.</summary>
    CancellationToken ClientGone { get; }

    /// <summary>Sends what was written; false when the stream is over (its client gone or its connection ending).</summary>
    ValueTask<bool> SendAsync();

    /// <summary>
    /// Answers the problem of a run refused before anything else was sent (<see cref="Delivery.PollResult.RefusedTopicId"/>):
    /// 404 for a topic that does not exist, 409 for one with <paramref name="maxMembers"/> members already.
    /// </summary>
    Task RefuseAsync(Delivery.PollResult refused, int maxMembers);

    /// <summary>Drops the connection (a client that does not read).</summary>
    void Abort();
}
