using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// The waiter is reused from one wait to the next, so a wake meant for an earlier wait can arrive late
/// (a signal walking a list it detached, a timer stopped as it fired). Such a wake may only wake the
/// current wait early, never throw in the waker's thread or be lost for the current wait.
/// </summary>
public sealed class PollWaiterTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(15);

    [Fact]
    public async Task AWakeCompletesTheOpenWait()
    {
        var waiter = new PollWaiter(1);
        waiter.Open();
        var wait = waiter.WaitAsync().AsTask();
        Assert.False(wait.IsCompleted);

        waiter.Wake();

        await wait.WaitAsync(Bound);
    }

    [Fact]
    public async Task AWakeBeforeTheWaitIsAwaitedIsKept()
    {
        var waiter = new PollWaiter(1);
        waiter.Open();

        waiter.Wake();

        await waiter.WaitAsync().AsTask().WaitAsync(Bound);
    }

    [Fact]
    public async Task ManyWakesOfOneWaitCompleteItOnceWithoutThrowing()
    {
        var waiter = new PollWaiter(1);
        waiter.Open();
        var wait = waiter.WaitAsync().AsTask();

        await Task.WhenAll(Enumerable.Range(0, 8).Select(_ => Task.Run(() =>
        {
            for (var i = 0; i < 1000; i++)
            {
                waiter.Wake();
            }
        }))).WaitAsync(Bound);

        await wait.WaitAsync(Bound);
    }

    [Fact]
    public void AWakeAfterCloseDoesNotReachTheNextWait()
    {
        var waiter = new PollWaiter(1);
        waiter.Open();
        waiter.Close();

        waiter.Wake();
        waiter.Open();

        var wait = waiter.WaitAsync().AsTask();
        Assert.False(wait.IsCompleted, "a wake between two waits belongs to neither");
    }

    [Fact]
    public async Task EachOpenIsANewWaitThatItsOwnWakeCompletes()
    {
        var waiter = new PollWaiter(1);
        for (var round = 0; round < 100; round++)
        {
            waiter.Open();
            var wait = waiter.WaitAsync().AsTask();
            Assert.False(wait.IsCompleted, $"round {round} must wait for its own wake");
            _ = Task.Run(waiter.Wake);
            await wait.WaitAsync(Bound);
            waiter.Close();
        }
    }

    /// <summary>Wakers racing the owner's Close and Open: queued wakes, or one waker running the owner's continuation itself.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task WakesRacingCloseAndOpenNeverThrowOrHang(bool oneWakesInline)
    {
        var waiter = new PollWaiter(1);
        using var stop = new CancellationTokenSource();
        var wakers = Enumerable.Range(0, 2).Select(waker => Task.Run(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                if (oneWakesInline && waker == 1)
                {
                    waiter.WakeInline();
                }
                else
                {
                    waiter.Wake();
                }
            }
        })).ToArray();

        try
        {
            for (var round = 0; round < 2000; round++)
            {
                waiter.Open();
                await waiter.WaitAsync().AsTask().WaitAsync(Bound);
                waiter.Close();
            }
        }
        finally
        {
            // Even when a round fails: the wakers would otherwise spin for the rest of the test run.
            await stop.CancelAsync();
        }

        // A waker that threw ends faulted, and this rethrows it.
        await Task.WhenAll(wakers).WaitAsync(Bound);
    }

    /// <summary>
    /// An inline wake (a publisher answering a few of its subscribers itself) runs the wait's continuation on
    /// the waker's thread; the continuation closes the wait it is being woken from (which must not wait for
    /// that wake to finish: it is that wake) and opens the next, which a later wake completes.
    /// </summary>
    [Fact]
    public async Task AnInlineWakeRunsTheContinuationOnTheWakersThreadWhichClosesAndWaitsAgain()
    {
        var waiter = new PollWaiter(1);
        waiter.Open();
        var continuedOn = 0;
        async Task OwnerAsync()
        {
            await waiter.WaitAsync().ConfigureAwait(false);
            continuedOn = Environment.CurrentManagedThreadId;
            waiter.Close();
            waiter.Open();
            await waiter.WaitAsync().ConfigureAwait(false);
            waiter.Close();
        }
        var owner = OwnerAsync();
        var wakerThread = 0;
        var waker = new Thread(() =>
        {
            wakerThread = Environment.CurrentManagedThreadId;
            waiter.WakeInline();
        });
        waker.Start();
        Assert.True(waker.Join(Bound), "the inline wake must return once the continuation waits again");
        Assert.Equal(wakerThread, continuedOn);
        Assert.False(owner.IsCompleted, "the second wait waits for its own wake");

        waiter.WakeInline();

        await owner.WaitAsync(Bound);
    }
}
