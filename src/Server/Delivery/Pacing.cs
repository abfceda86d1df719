namespace Laharsub.Server.Delivery;

/// <summary>
/// What a subscriber asked to skip (docs/protocol.md, "Conflation"): with an interval, each delivery
/// carries at most the latest message of each topic and deliveries are at least the interval apart; with
/// <see cref="Latest"/>, a topic that is behind when first read starts at its latest retained message.
/// Whatever is skipped is announced with a <c>conflated</c> notice.
/// </summary>
/// <param name="IntervalMilliseconds">The least time between two deliveries, 0 for none.</param>
/// <param name="Latest">Whether catching up starts at each topic's latest retained message.</param>
internal readonly record struct Conflation(int IntervalMilliseconds, bool Latest)
{
    /// <summary>The largest interval a subscriber may ask for: a minute, so a held poll still ends within its timeout's range.</summary>
    public const int MaxIntervalMilliseconds = 60_000;

    /// <summary>Whether anything is conflated at all.</summary>
    public bool IsOn => IntervalMilliseconds > 0 || Latest;
}

/// <summary>
/// How a run spaces its deliveries: the subscriber's <see cref="Conflation"/>, and for streams the server's
/// batching window. The default paces nothing, and the runner then does exactly what it did without pacing.
/// </summary>
/// <param name="Conflation">What the subscriber asked to skip.</param>
/// <param name="BatchWindow">
/// For streams: after a wake, how long to wait before reading so that what arrives meanwhile goes out in the
/// same write (<c>Laharsub:Streams:BatchWindow</c>); zero for none.
/// </param>
/// <param name="IntervalFromStart">
/// Whether the conflation interval also holds the first delivery, counted from the start: a long poll's
/// previous answer is the client's, and the server keeps no state between polls, so the interval is counted
/// from the poll's arrival, which follows the previous answer.
/// </param>
internal readonly record struct Pacing(Conflation Conflation, TimeSpan BatchWindow = default, bool IntervalFromStart = false)
{
    /// <summary>Whether the run holds any delivery back (the runner's one test on its hot path).</summary>
    public bool HoldsDeliveries => Conflation.IntervalMilliseconds > 0 || BatchWindow > TimeSpan.Zero;
}
