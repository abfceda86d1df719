using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Security.Cryptography;
using System.Text;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// The idempotency keys the in-memory store remembers: each with its request's fingerprint and, once stored,
/// the publish's answer, until <see cref="LaharsubStoreOptions.IdempotencyKeyLifetime"/> after it was stored.
/// At most <see cref="LaharsubStoreOptions.MaxIdempotencyKeys"/> at once, and each costs
/// <see cref="CostOf"/> against <c>MaxRetainedBytes</c> (reserved by the store with the messages). A record keeps
/// 128-bit digests of the key and the fingerprint, not their strings: a store remembers a key for minutes, so at
/// thousands of keyed publishes a second the strings would be most of its memory and of what collections copy.
/// </summary>
internal sealed class IdempotencyRecords(LaharsubStoreOptions options)
{
    /// <summary>The dictionary slot, the record object and its array, beyond the key's and fingerprint's characters.</summary>
    private const int RecordOverheadBytes = 200;

    private readonly ConcurrentDictionary<UInt128, Record> _records = new();

    // Completed records in the order they expire (one lifetime for all): a sweep looks only at the expired head.
    private readonly Queue<KeyValuePair<UInt128, Record>> _expiries = new();
    private readonly Lock _expiriesLock = new();
    private int _count;

    /// <summary>What one remembered key costs against <c>MaxRetainedBytes</c>: the one place it is counted.</summary>
    /// <remarks>
    /// It counts the key's and fingerprint's text although a record keeps their digests: a keyed publish's garbage grows
    /// with its key, and counting the text keeps what a flood of long keys grows the process by within the stated bound.
    /// </remarks>
    public static long CostOf(IdempotencyKey key, int topics) =>
        2L * (key.Key.Length + key.Fingerprint.Length) + (long)topics * 48 + RecordOverheadBytes;

    /// <summary>What the records know <paramref name="key"/> by: computed once per publish and passed to each call.</summary>
    public static KeyDigest Digest(IdempotencyKey key) => new(Digest(key.Key), Digest(key.Fingerprint));

    private static UInt128 Digest(string text)
    {
        var length = Encoding.UTF8.GetByteCount(text);
        byte[]? rented = null;
        var utf8 = length <= 512 ? stackalloc byte[512] : (rented = ArrayPool<byte>.Shared.Rent(length));
        try
        {
            Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
            SHA256.HashData(utf8[..Encoding.UTF8.GetBytes(text, utf8)], hash);
            return BinaryPrimitives.ReadUInt128LittleEndian(hash);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    /// <summary>How many keys are remembered (pending ones included).</summary>
    public int Count => Volatile.Read(ref _count);

    /// <summary>
    /// Claims <paramref name="key"/> for a publish about to be stored (<see cref="Claim.Started"/>: the caller
    /// then calls <see cref="Complete"/> or <see cref="Abandon"/>), or says why not; <paramref name="recorded"/>
    /// is the answer to replay on <see cref="Claim.Replay"/>.
    /// </summary>
    public Claim TryBegin(KeyDigest key, long nowTicks, ref long retainedBytes, out IReadOnlyList<PublishResult>? recorded)
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
                if (existing.Fingerprint != key.Fingerprint)
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
    public void Complete(KeyDigest key, IReadOnlyList<PublishResult> topics, long nowTicks, long cost)
    {
        var record = new Record(key.Fingerprint, topics, nowTicks + options.IdempotencyKeyLifetime.Ticks, cost);
        _records[key.Key] = record;
        lock (_expiriesLock)
        {
            _expiries.Enqueue(KeyValuePair.Create(key.Key, record));
        }
    }

    /// <summary>Forgets a key whose publish was refused: nothing changed, so a retry may run again.</summary>
    public void Abandon(KeyDigest key)
    {
        if (_records.TryRemove(key.Key, out _))
        {
            Interlocked.Decrement(ref _count);
        }
    }

    /// <summary>Forgets the keys whose lifetime is over and releases their bytes.</summary>
    public void Sweep(long nowTicks, ref long retainedBytes)
    {
        lock (_expiriesLock)
        {
            while (_expiries.TryPeek(out var head) && head.Value.ExpiresAtTicks <= nowTicks)
            {
                _expiries.Dequeue();
                // A record already removed (found expired by a retry) is not there to remove again.
                Remove(head.Key, head.Value, ref retainedBytes);
            }
        }
    }

    private void Remove(UInt128 key, Record record, ref long retainedBytes)
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
    private sealed record Record(UInt128 Fingerprint, IReadOnlyList<PublishResult>? Topics, long ExpiresAtTicks, long Cost);

    /// <summary>The first 128 bits of the SHA-256 of an idempotency key and of its request's fingerprint.</summary>
    public readonly record struct KeyDigest(UInt128 Key, UInt128 Fingerprint);
}
