using System.Threading.Channels;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Client.Tests;

/// <summary>
/// A fake clock (<see cref="LaharsubClientOptions.TimeProvider"/>, and the server's when shared) that
/// reports each one-shot timer as it is armed: a client's retry wait, its time limit of a request or
/// poll. A test moves time on once the client is known to wait, instead of sleeping, or advancing
/// blindly while the client is still busy on the network.
/// </summary>
internal sealed class WatchedClock : FakeTimeProvider
{
    private readonly Channel<TimeSpan> _armed = Channel.CreateUnbounded<TimeSpan>();

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        var timer = base.CreateTimer(callback, state, dueTime, period);
        // The timer is among the clock's waiters now: an Advance past its due time fires it.
        Armed(dueTime, period);
        return new ArmedTimer(timer, this);
    }

    private void Armed(TimeSpan dueTime, TimeSpan period)
    {
        if (period == Timeout.InfiniteTimeSpan && dueTime != Timeout.InfiniteTimeSpan)
        {
            _armed.Writer.TryWrite(dueTime);
        }
    }

    /// <summary>Reports a timer armed later too, as CancellationTokenSource.CancelAfter arms one (Polly's timeouts do).</summary>
    private sealed class ArmedTimer(ITimer timer, WatchedClock clock) : ITimer
    {
        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            var changed = timer.Change(dueTime, period);
            clock.Armed(dueTime, period);
            return changed;
        }

        public void Dispose() => timer.Dispose();

        public ValueTask DisposeAsync() => timer.DisposeAsync();
    }

    /// <summary>
    /// The due time of the next one-shot timer armed that <paramref name="which"/> accepts (others are
    /// skipped); fails after <see cref="TestSupport.Timeout"/>, throws <see cref="OperationCanceledException"/>
    /// when <paramref name="cancellationToken"/> fires first.
    /// </summary>
    public async Task<TimeSpan> NextArmedAsync(Func<TimeSpan, bool> which, CancellationToken cancellationToken = default)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TestSupport.Timeout);
        while (true)
        {
            TimeSpan dueTime;
            try
            {
                dueTime = await _armed.Reader.ReadAsync(timeout.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"No timer was armed on the clock within {TestSupport.Timeout}.");
            }
            if (which(dueTime))
            {
                return dueTime;
            }
        }
    }

    /// <summary>
    /// Until <paramref name="task"/> completes: waits for the client to arm a timer that
    /// <paramref name="which"/> accepts, then moves the clock on by exactly its due time, so that it fires.
    /// Returns how far the clock moved in all. Fails after <see cref="TestSupport.Timeout"/> without progress.
    /// </summary>
    public async Task<TimeSpan> AdvanceThroughWaitsAsync(Task task, Func<TimeSpan, bool> which)
    {
        var moved = TimeSpan.Zero;
        using var done = new CancellationTokenSource();
        while (true)
        {
            var armed = NextArmedAsync(which, done.Token);
            if (await Task.WhenAny(task, armed).WaitAsync(TestSupport.Timeout) == task)
            {
                await done.CancelAsync();
                await armed.ContinueWith(static _ => { }, TaskScheduler.Default);
                return moved;
            }
            var dueTime = await armed;
            Advance(dueTime);
            moved += dueTime;
        }
    }
}
