namespace Laharsub.Server.Tests.Support;

/// <summary>
/// Tests that listen to activity sources process-wide (every server in the test process then traces, and the
/// fast path leaves requests to the pipeline), and the tests that count what the fast path answered: they run
/// one at a time, after the parallel ones, so that neither changes what the other sees.
/// </summary>
[CollectionDefinition(nameof(ProcessWideListeners), DisableParallelization = true)]
public sealed class ProcessWideListeners;
