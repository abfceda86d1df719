using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// The runtime's GC events become pauses the same way for the generator (its own listener) and for a server
/// (HeapSampler pauses --csv): from SuspendEE to RestartEE, named by the first collection inside.
/// </summary>
public sealed class GcPauseTrackerTests
{
    [Fact]
    public void APauseIsNamedByItsCollectionAndCountsTheBytesItsCondemnedGenerationsPromoted()
    {
        var tracker = new GcPauseTracker();

        tracker.Suspending(1_000);
        tracker.Collecting(generation: 1, type: 0);
        tracker.Collecting(generation: 2, type: 1);
        tracker.Promoted([100, 20, 3_000, 0, 0]);
        var pause = tracker.Restarted(46_000);

        Assert.Equal(new GcPause(1_000, 46_000, 1, "blocking", 120), pause);
        Assert.Equal("1000,46000,45000,1,blocking,120", GcPauseCsv.Row(pause!.Value));
    }

    [Fact]
    public void ABackgroundCollectionsOtherPauseHasNoGenerationAndARestartWithoutASuspendIsNoPause()
    {
        var tracker = new GcPauseTracker();

        Assert.Null(tracker.Restarted(500));
        tracker.Suspending(1_000);
        var pause = tracker.Restarted(1_250);

        Assert.Equal("1000,1250,250,,background-pause,0", GcPauseCsv.Row(pause!.Value));
        Assert.Null(tracker.Restarted(2_000));
    }
}
