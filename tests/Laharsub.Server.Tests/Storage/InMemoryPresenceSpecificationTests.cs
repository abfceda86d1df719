using Laharsub.Server.Specification;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests.Storage;

/// <summary>The presence specification on the in-memory store: one instance, so its two "instances" are one store swept concurrently.</summary>
public sealed class InMemoryPresenceSpecificationTests : LaharsubPresenceStoreSpecification
{
    protected override ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options) =>
        ValueTask.FromResult<ILaharsubStore>(new InMemoryStore(Options.Create(options), new NoTopicSignals(), new FakeTimeProvider()));

    private sealed class NoTopicSignals : ITopicSignals
    {
        public void Signal(long topicId)
        {
        }

        public void SignalAll()
        {
        }
    }
}
