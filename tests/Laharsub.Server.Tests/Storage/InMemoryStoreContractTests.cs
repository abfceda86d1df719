using Laharsub.Server.Delivery;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Storage;
using Laharsub.Testing;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Storage;

/// <summary>The store contract on the in-memory store, on a clock the test moves.</summary>
public sealed class InMemoryStoreContractTests : StoreContractTests
{
    private readonly FakeTimeProvider _clock = new();

    protected override TimeSpan ShortTimeToLive => TimeSpan.FromSeconds(10);

    private protected override Task<ILaharsubStore> CreateStoreAsync(LaharsubOptions options, TopicSignals signals)
    {
        var store = new InMemoryStore(Options.Create(options.Store), signals, _clock);
        DisposeAfterTest(store);
        return Task.FromResult<ILaharsubStore>(store);
    }

    /// <summary>
    /// Moves the fake clock, with no real wait: the store's retention sweep is a timer of this clock, and
    /// <see cref="FakeTimeProvider.Advance"/> runs each timer that falls due, at its own time and on this
    /// thread, before it returns.
    /// </summary>
    protected override Task LetTimePassAsync(TimeSpan time)
    {
        _clock.Advance(time);
        return Task.CompletedTask;
    }
}
