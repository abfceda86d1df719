using System.Collections.Concurrent;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// The idempotency keys the in-memory store remembers: each with its request's fingerprint and, once stored,
/// the publish's answer, until <see cref="LaharsubStoreOptions.IdempotencyKeyLifetime"/> after it was stored.
/// At most <see cref="LaharsubStoreOptions.MaxIdempotencyKeys"/> at once, and each costs
/// <see cref="CostOf"/> against <c>MaxRetainedBytes</c> (reserved by the store with the messages).
/// </summary>
internal sealed class IdempotencyRecords(LaharsubStoreOptions options)
{
    /// <summary>The dictionary slot, the record object and its array, beyond the strings' characters.</summary>
    private const int RecordOverheadBytes = 200;

    private readonly ConcurrentDictionary<string, Record> _records = new(StringComparer.Ordinal);
    private int _count;

    /// <summary>What one remembered key costs against <c>MaxRetainedBytes</c>: the one place it is counted.</summary>
    public static long CostOf(IdempotencyKey key, int topics) =>
        2L * (key.Key.Length + key.Fingerprint.Length) + (long)topics * 48 + RecordOverheadBytes;

    /// <summary>How many keys are remembered (pending ones included).</summary>
    public int Count => Volatile.Read(ref _count);

    /// <summary>
    /// Claims <paramref name="key"/> for a publish about to be stored (<see cref="Claim.Started"/>: the caller
    /// then calls <see cref="Complete"/> or <see cref="Abandon"/>), or says why not; <paramref name="recorded"/>
    /// is the answer to replay on <see cref="Claim.Replay"/>.
    /// </summary>
    public Claim TryBegin(IdempotencyKey key, long nowTicks, ref long retainedBytes, out IReadOnlyList<PublishResult>? recorded)
    {
        recorded = null;
        while (true)
        {
            if (_records.TryGetValue(key.Key, out var existing))
            {
                if (existing.ExpiresAtTicks <= nowTicks)
                {
                    Remove(key.Key, existing, ref retainedBytes);
                    continue;
                }
                if (!string.Equals(existing.Fingerprint, key.Fingerprint, StringComparison.Ordinal))
                {
                    return Claim.Mismatch;
                }
                recorded = existing.Topics;
                return recorded is null ? Claim.InProgress : Claim.Replay;
            }
            if (Interlocked.Increment(ref _count) > options.MaxIdempotencyKeys)
            {
                Interlocked.Decrement(ref _count);
                return Claim.Full;
            }
            if (_records.TryAdd(key.Key, new Record(key.Fingerprint, null, long.MaxValue, 0)))
            {
                return Claim.Started;
            }
            Interlocked.Decrement(ref _count);
        }
    }

    /// <summary>Records the answer of the publish <see cref="TryBegin"/> started; its <paramref name="cost"/> is already reserved.</summary>
    public void Complete(IdempotencyKey key, IReadOnlyList<PublishResult> topics, long nowTicks, long cost) =>
        _records[key.Key] = new Record(key.Fingerprint, topics, nowTicks + options.IdempotencyKeyLifetime.Ticks, cost);

    /// <summary>Forgets a key whose publish was refused: nothing changed, so a retry may run again.</summary>
    public void Abandon(IdempotencyKey key)
    {
        if (_records.TryRemove(key.Key, out _))
        {
            Interlocked.Decrement(ref _count);
        }
    }

    /// <summary>Forgets the keys whose lifetime is over and releases their bytes.</summary>
    public void Sweep(long nowTicks, ref long retainedBytes)
    {
        foreach (var (key, record) in _records)
        {
            if (record.ExpiresAtTicks <= nowTicks)
            {
                Remove(key, record, ref retainedBytes);
            }
        }
    }

    private void Remove(string key, Record record, ref long retainedBytes)
    {
        // Only that very record: a retry may have claimed the key again meanwhile.
        if (_records.TryRemove(KeyValuePair.Create(key, record)))
        {
            Interlocked.Decrement(ref _count);
            Interlocked.Add(ref retainedBytes, -record.Cost);
        }
    }

    /// <summary>What <see cref="TryBegin"/> found.</summary>
    public enum Claim
    {
        /// <summary>The key is new and now claimed for this publish.</summary>
        Started,
        /// <summary>The key was stored with the same request: replay its answer.</summary>
        Replay,
        /// <summary>The key was used with another request.</summary>
        Mismatch,
        /// <summary>A publish with the key is being stored right now.</summary>
        InProgress,
        /// <summary><see cref="LaharsubStoreOptions.MaxIdempotencyKeys"/> reached.</summary>
        Full,
    }

    /// <summary>A remembered key; <see cref="Topics"/> is null while its publish is being stored.</summary>
    private sealed record Record(string Fingerprint, IReadOnlyList<PublishResult>? Topics, long ExpiresAtTicks, long Cost);
}
