namespace Laharsub.Testing;

/// <summary>Waits for a condition that another party makes true, failing after a bound instead of hanging.</summary>
public static class Eventually
{
    public static async Task HoldsAsync(Func<Task<bool>> condition, TimeSpan timeout, string because)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!await condition().ConfigureAwait(false))
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Timed out after {timeout} waiting until {because}.");
            }
            // A short poll interval, not a race: the condition is re-checked until it holds.
            await Task.Delay(10).ConfigureAwait(false);
        }
    }
}
