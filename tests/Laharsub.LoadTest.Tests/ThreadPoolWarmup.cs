using System.Runtime.CompilerServices;

namespace Laharsub.LoadTest.Tests;

internal static class ThreadPoolWarmup
{
    /// <summary>
    /// The test host blocks a pool thread or two of its own, and on a 2-core machine the pool starts
    /// with two; the load generator (and the in-process server) would then wait for the pool's slow
    /// thread injection and report that wait as schedule lag. The tool itself does not run under this.
    /// </summary>
    [ModuleInitializer]
    internal static void Initialize()
    {
        ThreadPool.GetMinThreads(out var workers, out var completionPorts);
        ThreadPool.SetMinThreads(Math.Max(workers, 16), Math.Max(completionPorts, 16));
    }
}
