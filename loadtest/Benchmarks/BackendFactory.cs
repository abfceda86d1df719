using Laharsub.Server.Hosting;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Wire;
using Microsoft.Extensions.Options;

namespace Laharsub.Benchmarks;

/// <summary>The real in-memory backend, configured like the load test's server, on a clock the benchmark controls.</summary>
public static class BackendFactory
{
    public static readonly ReadOnlyMemory<byte> TenBytes = new byte[] { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };

    public static InMemoryBackend Create(ManualClock? clock = null, LaharsubOptions? options = null) =>
        new(Options.Create(options ?? new LaharsubOptions { MessageTimeToLive = TimeSpan.FromSeconds(15) }), new WireFormat(), clock ?? new ManualClock());

    public static long[] CreateTopics(ILaharsubBackend backend, int count) =>
        Enumerable.Range(0, count).Select(_ => backend.CreateTopicAsync().AsTask().GetAwaiter().GetResult()!.TopicId).ToArray();

    /// <summary>The cursor that makes a poll wait on the topic: one past its last message.</summary>
    public static long NextId(ILaharsubBackend backend, long topicId) =>
        backend.GetTopicAsync(topicId).AsTask().GetAwaiter().GetResult()!.LastMessageId + 1;
}

/// <summary>A clock that moves only when told, so retention can be expired on demand.</summary>
public sealed class ManualClock : TimeProvider
{
    public DateTimeOffset Now { get; set; } = new(2026, 11, 22, 9, 0, 0, TimeSpan.Zero);

    public override DateTimeOffset GetUtcNow() => Now;
}
