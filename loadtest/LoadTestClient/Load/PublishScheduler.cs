using System.Runtime.InteropServices;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTestClient.Load;

/// <summary>
/// Fires every client's publishes on a fixed schedule from one thread: client <c>c</c>'s publish
/// <c>j</c> is due at <c>start + phase(c) + j * interval</c>, whether or not earlier publishes have
/// been answered, so that a slow server cannot slow the offered load down (coordinated omission).
/// One thread walking the clients in phase order replaces tens of thousands of timers; on Linux it
/// sleeps until each due time with clock_nanosleep, accurate to tens of microseconds.
/// </summary>
internal sealed partial class PublishScheduler
{
    private const int ClockMonotonic = 1;
    private const int TimerAbsoluteTime = 1;

    private readonly SimulatedClient[] _clients;
    private readonly long _intervalMicroseconds;
    private readonly Action<SimulatedClient, long> _fire;

    /// <param name="clients">The clients, any order; they are walked in phase order.</param>
    /// <param name="interval">Each client's publish interval.</param>
    /// <param name="fire">Starts one publish: the client and its intended send time (µs); must return at once.</param>
    public PublishScheduler(IEnumerable<SimulatedClient> clients, TimeSpan interval, Action<SimulatedClient, long> fire)
    {
        _clients = clients.OrderBy(c => c.PhaseMicroseconds).ToArray();
        _intervalMicroseconds = (long)(interval.TotalMilliseconds * 1000);
        _fire = fire;
    }

    /// <summary>Fires publishes due from <paramref name="startMicroseconds"/> until <paramref name="endMicroseconds"/> (exclusive) on a new thread.</summary>
    public Task RunAsync(long startMicroseconds, long endMicroseconds, CancellationToken cancellationToken)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var thread = new Thread(() =>
        {
            try
            {
                Run(startMicroseconds, endMicroseconds, cancellationToken);
                done.SetResult();
            }
            catch (Exception exception)
            {
                done.SetException(exception);
            }
        })
        {
            IsBackground = true,
            Name = "publish scheduler",
            Priority = ThreadPriority.AboveNormal,
        };
        thread.Start();
        return done.Task;
    }

    private void Run(long start, long end, CancellationToken cancellationToken)
    {
        if (_clients.Length == 0)
        {
            return;
        }
        var index = 0;
        var period = 0L;
        while (!cancellationToken.IsCancellationRequested)
        {
            var due = start + period * _intervalMicroseconds + _clients[index].PhaseMicroseconds;
            if (due >= end)
            {
                return;
            }
            var now = MonotonicClock.NowMicroseconds;
            if (due > now)
            {
                // Wake at least every 50 ms to notice cancellation.
                SleepUntil(Math.Min(due, now + 50_000));
                continue;
            }
            _fire(_clients[index], due);
            if (++index == _clients.Length)
            {
                index = 0;
                period++;
            }
        }
    }

    private static void SleepUntil(long microseconds)
    {
        if (!OperatingSystem.IsLinux())
        {
            Thread.Sleep(1);
            return;
        }
        // Stopwatch timestamps are CLOCK_MONOTONIC on Linux, so the same clock can be slept on.
        var timespec = new Timespec { Seconds = microseconds / 1_000_000, Nanoseconds = microseconds % 1_000_000 * 1000 };
        _ = ClockNanosleep(ClockMonotonic, TimerAbsoluteTime, ref timespec, IntPtr.Zero);
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct Timespec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    [LibraryImport("libc", EntryPoint = "clock_nanosleep")]
    private static partial int ClockNanosleep(int clockId, int flags, ref Timespec request, IntPtr remaining);
}
