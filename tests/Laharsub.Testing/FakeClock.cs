using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Testing;

/// <summary>Moving a server's fake clock while the server acts on real threads.</summary>
public static class FakeClock
{
    /// <summary>
    /// Moves <paramref name="clock"/> on by <paramref name="step"/> until <paramref name="condition"/> holds,
    /// giving the server real time to act after each step (a timer may be made just after a step: the next
    /// step fires it); fails after a bound.
    /// </summary>
    public static async Task<TimeSpan> AdvanceUntilAsync(this FakeTimeProvider clock, Func<Task<bool>> condition, TimeSpan step, string because)
    {
        var advanced = TimeSpan.Zero;
        for (var round = 0; round < 400; round++)
        {
            if (await condition())
            {
                return advanced;
            }
            clock.Advance(step);
            advanced += step;
            await Task.Delay(10);
        }
        throw new TimeoutException($"Not {because} after {advanced} of the server's clock.");
    }
}
