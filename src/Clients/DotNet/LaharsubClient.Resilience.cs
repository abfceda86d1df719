namespace Laharsub.Client;

public sealed partial class LaharsubClient
{
    // Polly's types, known by name: the client works behind a resilience handler without depending on Polly.
    private const string PollyRejection = "Polly.ExecutionRejectedException";
    private const string PollyTimeout = "Polly.Timeout.TimeoutRejectedException";

    /// <summary>
    /// Whether a resilience handler in the HttpClient's pipeline gave up on the request rather than the
    /// server answering: Polly's timeout, open circuit breaker or rate limiter. Nothing was consumed,
    /// so a subscription tries again from its cursors.
    /// </summary>
    internal static bool IsRejectedByHandler(Exception exception) => FindInChain(exception, PollyRejection);

    /// <summary>Whether a resilience handler's timeout cut the request.</summary>
    internal static bool IsCutByHandlerTimeout(Exception exception) => FindInChain(exception, PollyTimeout);

    /// <summary>
    /// After a resilience handler's timeout cut a poll that had waited <paramref name="waited"/>, holds
    /// the next polls for a quarter of the shorter of that and the hold time, in whole seconds (at least one).
    /// </summary>
    /// <remarks>
    /// The handler's timeouts cannot be read, only bounded by when the cut came, and that is usually its
    /// total timeout, which spans several attempts (the standard handler's 30 s spans three of 10 s).
    /// A quarter of it fits under one attempt, so one cut is enough there: 30 s becomes 7 s. A lower
    /// bound would take more cuts, each one a failure that the handler's circuit breaker counts.
    /// </remarks>
    internal void HoldPollsUnder(TimeSpan waited)
    {
        var hold = PollTimeout;
        var lower = TimeSpan.FromSeconds(Math.Max(1, Math.Floor(Math.Min(hold.TotalSeconds, waited.TotalSeconds) / 4)));
        if (lower < hold)
        {
            Interlocked.CompareExchange(ref _pollTimeoutTicks, lower.Ticks, hold.Ticks);
        }
    }

    private static bool FindInChain(Exception exception, string typeName)
    {
        for (Exception? error = exception; error is not null; error = error.InnerException)
        {
            for (var type = error.GetType(); type is not null; type = type.BaseType)
            {
                if (type.FullName == typeName)
                {
                    return true;
                }
            }
        }
        return false;
    }
}
