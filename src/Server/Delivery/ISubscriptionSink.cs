namespace Laharsub.Server.Delivery;

/// <summary>
/// A transport's side of a running subscription (<see cref="SubscriptionRunner.RunAsync{TSink}(ReadOnlySpan{Subscription}, Func{Storage.Message, int}?, SubscriptionWait, TSink, Pacing, PresenceIdentity?)"/>): it
/// writes what the runner delivers, and decides after each delivery and each ended wait whether the
/// subscription goes on. A long poll answers once and stops; a stream writes and goes on.
/// </summary>
/// <remarks>
/// A struct, so that it travels in the runner's state machine: a transport that awaited the runner
/// instead would keep a second state machine for a held poll's whole wait, which the GC copies
/// (docs/performance-history.md, "What a collection finds young, and fewer collections").
/// </remarks>
internal interface ISubscriptionSink
{
    /// <summary>Whether the sink wants <see cref="PositionedAsync"/> (a stream does; a poll need not pay for the copy).</summary>
    bool WantsPositions { get; }

    /// <summary>
    /// Once, after the first read and before the first delivery: every subscription's position, which a
    /// client resumes from if it loses what follows: the requested cursor and epoch, with a subscription
    /// that gave no cursor resolved to the topic's next message. Returns whether to go on.
    /// </summary>
    ValueTask<bool> PositionedAsync(Subscription[] positions);

    /// <summary>
    /// Writes <paramref name="result"/>: messages and notices, or (only at the first read) a topic that
    /// does not exist. Returns whether to go on; the cursors have moved past what it carried.
    /// </summary>
    ValueTask<bool> DeliverAsync(PollResult result);

    /// <summary>
    /// The wait ended with nothing to deliver, for <paramref name="reason"/>. Returns whether to go on
    /// (a stream's heartbeat); for <see cref="WaitEnd.TimedOut"/> the wait then starts again.
    /// </summary>
    ValueTask<bool> WaitEndedAsync(WaitEnd reason);

    /// <summary>The store failed while reading; the exception propagates after this.</summary>
    void Failed();
}

/// <summary>Why a subscription's wait ended with nothing to deliver, most pressing first.</summary>
internal enum WaitEnd
{
    /// <summary>It has not ended.</summary>
    None,

    /// <summary>The client went away: nobody to answer.</summary>
    ClientGone,

    /// <summary>The server is stopping: the client should resume elsewhere.</summary>
    Stopping,

    /// <summary>The wait's interval passed: a poll's timeout, a stream's heartbeat.</summary>
    TimedOut,
}
