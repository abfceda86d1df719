using Laharsub.Server.Specification;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Storage;

/// <summary>The store specification (the Laharsub.Server.Specification.Tests package) on the in-memory store, on a clock the test moves.</summary>
public sealed class InMemoryStoreSpecificationTests : LaharsubStoreSpecification
{
    private readonly FakeTimeProvider _clock = new();

    protected override ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options, ITopicSignals signals) =>
        ValueTask.FromResult<ILaharsubStore>(new InMemoryStore(Options.Create(options), signals, _clock));

    /// <summary>
    /// Moves the fake clock, with no real wait: the store's retention sweep is a timer of this clock
    /// (<c>TimeProvider.CreateTimer</c>), and <see cref="FakeTimeProvider.Advance"/> steps the time to each
    /// due timer and runs its callback on this thread before returning, so every sweep due in
    /// <paramref name="time"/> has run, at its own time, when this returns.
    /// </summary>
    protected override Task LetTimePassAsync(TimeSpan time)
    {
        _clock.Advance(time);
        return Task.CompletedTask;
    }
}
