namespace Laharsub.Server.Storage;

/// <summary>Store-wide counts for health checks and metrics.</summary>
/// <param name="TopicCount">Topics that exist.</param>
/// <param name="RetainedBytes">Bytes counted against <c>Laharsub:MaxRetainedBytes</c>.</param>
public readonly record struct StoreStatistics(int TopicCount, long RetainedBytes);
