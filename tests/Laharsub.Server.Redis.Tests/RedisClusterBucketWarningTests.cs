using System.Collections.Concurrent;
using Laharsub.Server.Storage;
using Laharsub.Testing;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// The default Laharsub:Redis:Buckets=1 keeps every topic in one hash slot: on a Redis Cluster the store
/// says so at start, naming the setting and the value to set, and says nothing where one bucket is right.
/// </summary>
[Collection(SharedRedisCluster.Name)]
public sealed class RedisClusterBucketWarningTests(RedisClusterFixture cluster)
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(20);

    [Fact]
    public async Task OneBucketOnAClusterIsWarnedAboutAtStartWithTheSettingToChange()
    {
        var logs = new RecordingLogs();
        await using var handle = RedisStores.Create(cluster.Cluster.Configuration, $"warn-{Guid.NewGuid():N}:", new LaharsubStoreOptions(), new NoSignals(), logs: logs);

        await Eventually.HoldsAsync(() => Task.FromResult(!logs.Warnings.IsEmpty), Bound, "the store warns about one bucket on a cluster");

        var warning = Assert.Single(logs.Warnings);
        Assert.Contains("Laharsub:Redis:Buckets is 1 on a Redis Cluster of 3 primaries", warning, StringComparison.Ordinal);
        Assert.Contains("Set Laharsub:Redis:Buckets=16", warning, StringComparison.Ordinal);
    }

    [Fact]
    public async Task SeveralBucketsOnAClusterAndOneBucketOnOneRedisStartWithoutAWarning()
    {
        var redis = await SharedRedis.GetAsync().WaitAsync(Bound);
        var logs = new RecordingLogs();
        await using var spread = RedisStores.Create(cluster.Cluster.Configuration, $"warn-{Guid.NewGuid():N}:", new LaharsubStoreOptions(), new NoSignals(),
            options => options.Buckets = 16, logs);
        await using var single = RedisStores.Create(redis.Configuration, SharedRedis.UniquePrefix(), new LaharsubStoreOptions(), new NoSignals(), logs: logs);

        // Both connected and served a request: each has seen its servers, where the warning would be decided.
        Assert.NotNull(await spread.Store.CreateTopicAsync().AsTask().WaitAsync(Bound));
        Assert.NotNull(await single.Store.CreateTopicAsync().AsTask().WaitAsync(Bound));

        Assert.Empty(logs.Warnings);
    }

    /// <summary>Keeps the store's warnings.</summary>
    private sealed class RecordingLogs : ILoggerProvider
    {
        public ConcurrentQueue<string> Warnings { get; } = new();

        public ILogger CreateLogger(string categoryName) => new Logger(Warnings);

        public void Dispose()
        {
        }

        private sealed class Logger(ConcurrentQueue<string> warnings) : ILogger
        {
            public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

            public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Warning;

            public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            {
                if (IsEnabled(logLevel))
                {
                    warnings.Enqueue(formatter(state, exception));
                }
            }
        }
    }
}
