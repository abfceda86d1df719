namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// Something private that a test class's facts share (a redis-server, a cluster, a Sentinel setup): started before the
/// first fact, stopped after the last one, not left to a handler of the test host's exit, which does not run when the
/// test platform kills a host that is slow to end. When it cannot start, the facts fail, saying why.
/// </summary>
public abstract class PrivateFixture<T> : IAsyncLifetime
    where T : class, IAsyncDisposable
{
    private T? _started;

    /// <summary>What was started.</summary>
    protected T Started => _started ?? throw new InvalidOperationException($"The private {typeof(T).Name} did not start.");

    protected abstract Task<T> StartAsync();

    public async Task InitializeAsync() => _started = await StartAsync();

    public async Task DisposeAsync()
    {
        if (_started is not null)
        {
            await _started.DisposeAsync();
        }
    }
}
