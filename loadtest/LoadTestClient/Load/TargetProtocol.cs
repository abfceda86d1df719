namespace Laharsub.LoadTestClient.Load;

/// <summary>The servers the generator can measure.</summary>
internal enum TargetKind
{
    /// <summary>This repository's server.</summary>
    Laharsub,

    /// <summary>nginx with the nchan module (loadtest/peers/nchan.conf): the reference the issue races against.</summary>
    Nchan,
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
        TargetKind.Laharsub => new LaharsubProtocol(plan),
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

    /// <summary>One client's poll requests and the reading of their answers.</summary>
    public abstract IPollWire CreatePollWire(IReadOnlyList<Measurement.DeliveryVerifier> topics);
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
