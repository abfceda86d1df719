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

    private protected override Task<ILaharsubStore> CreateStoreAsync(LaharsubOptions options, TopicSignals signals) =>
        Task.FromResult<ILaharsubStore>(new InMemoryStore(Options.Create(options.Store), signals, _clock));

    protected override async Task LetTimePassAsync(TimeSpan time)
    {
        _clock.Advance(time);
        // The sweep runs on a real timer; give it a turn, as real time would.
        await Task.Delay(100);
    }
}
