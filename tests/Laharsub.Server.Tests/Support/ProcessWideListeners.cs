namespace Laharsub.Server.Tests.Support;

/// <summary>
/// Tests that listen to activity sources process-wide (every server in the test process then traces, and its
/// spans are seen by every such test), and the tests that count what the fast path answered: they run
/// one at a time, after the parallel ones, so that neither changes what the other sees.
/// </summary>
[CollectionDefinition(nameof(ProcessWideListeners), DisableParallelization = true)]
public sealed class ProcessWideListeners;
