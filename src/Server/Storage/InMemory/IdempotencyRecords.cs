using System.Buffers;
using System.Buffers.Binary;
using System.Security.Cryptography;
using System.Text;

namespace Laharsub.Server.Storage.InMemory;

/// <summary>
/// The idempotency keys the in-memory store remembers: each with its request's fingerprint and, once stored,
/// the publish's answer, until <see cref="LaharsubStoreOptions.IdempotencyKeyLifetime"/> after it was stored.
/// At most <see cref="LaharsubStoreOptions.MaxIdempotencyKeys"/> at once, and each costs
/// <see cref="CostOf"/> against <c>MaxRetainedBytes</c> (reserved by the store with the messages). A record keeps
/// 128-bit digests of the key and the fingerprint, not their strings, and the records are values in one table, not
/// objects: a store remembers a key for minutes, so at thousands of keyed publishes a second an object per key (or
/// its strings) was most of what each young collection copied (docs/performance.md).
/// </summary>
internal sealed class IdempotencyRecords(LaharsubStoreOptions options)
{
    /// <summary>The table's entry and the expiry queue's, beyond the key's and fingerprint's characters.</summary>
    private const int RecordOverheadBytes = 200;

    // One lock for the table and the queue: a claim or a completion holds it for a lookup and a write.
    private readonly Lock _lock = new();
    private readonly Dictionary<UInt128, Record> _records = [];

    // Completed records in the order they expire (one lifetime for all): a sweep looks only at the expired head.
    private readonly Queue<(UInt128 Key, long Completion)> _expiries = new();
    private long _completions;
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
        lock (_lock)
        {
            if (_records.TryGetValue(key.Key, out var existing))
            {
                if (existing.Completed && existing.ExpiresAtTicks <= nowTicks)
                {
                    Remove(key.Key, existing, ref retainedBytes);
                }
                else if (existing.Fingerprint != key.Fingerprint)
                {
                    return Claim.Mismatch;
                }
                else if (!existing.Completed)
                {
                    return Claim.InProgress;
                }
                else
                {
                    recorded = existing.Answer();
                    return Claim.Replay;
                }
            }
            if (_count >= options.MaxIdempotencyKeys)
            {
                return Claim.Full;
            }
            _records.Add(key.Key, new Record { Fingerprint = key.Fingerprint, ExpiresAtTicks = long.MaxValue });
            Volatile.Write(ref _count, _count + 1);
            return Claim.Started;
        }
    }

    /// <summary>Records the answer of the publish <see cref="TryBegin"/> started; its <paramref name="cost"/> is already reserved.</summary>
    public void Complete(KeyDigest key, IReadOnlyList<PublishResult> topics, long nowTicks, long cost)
    {
        var record = new Record
        {
            Fingerprint = key.Fingerprint,
            ExpiresAtTicks = nowTicks + options.IdempotencyKeyLifetime.Ticks,
            Cost = cost,
            // The common answer, one topic's, is kept in the entry itself: no object per key.
            One = topics.Count == 1 ? topics[0] : default,
            Many = topics.Count == 1 ? null : [.. topics],
        };
        lock (_lock)
        {
            record.Completion = ++_completions;
            _records[key.Key] = record;
            _expiries.Enqueue((key.Key, record.Completion));
        }
    }

    /// <summary>Forgets a key whose publish was refused: nothing changed, so a retry may run again.</summary>
    public void Abandon(KeyDigest key)
    {
        lock (_lock)
        {
            if (_records.Remove(key.Key))
            {
                Volatile.Write(ref _count, _count - 1);
            }
        }
    }

    /// <summary>Forgets the keys whose lifetime is over and releases their bytes.</summary>
    public void Sweep(long nowTicks, ref long retainedBytes)
    {
        lock (_lock)
        {
            while (_expiries.TryPeek(out var head))
            {
                // Only the completion the queue holds: a record found expired by a retry is gone, or claimed again since.
                if (!_records.TryGetValue(head.Key, out var record) || record.Completion != head.Completion)
                {
                    _expiries.Dequeue();
                    continue;
                }
                if (record.ExpiresAtTicks > nowTicks)
                {
                    break;
                }
                _expiries.Dequeue();
                Remove(head.Key, record, ref retainedBytes);
            }
            ShrinkAfterBurst();
        }
    }

    /// <summary>
    /// Lets the table's and the queue's arrays go once a burst of keys has expired: they keep their largest size otherwise,
    /// memory that <c>MaxRetainedBytes</c> no longer counts once the keys' cost is released.
    /// </summary>
    private void ShrinkAfterBurst()
    {
        const int SmallestKept = 1024;
        if (_records.EnsureCapacity(0) is var capacity && capacity > SmallestKept && _records.Count < capacity / 4)
        {
            _records.TrimExcess(Math.Max(_records.Count * 2, SmallestKept));
            _expiries.TrimExcess();
        }
    }

    /// <summary>The table's capacity, for tests.</summary>
    internal int Capacity
    {
        get
        {
            lock (_lock)
            {
                return _records.EnsureCapacity(0);
            }
        }
    }

    private void Remove(UInt128 key, Record record, ref long retainedBytes)
    {
        _records.Remove(key);
        Volatile.Write(ref _count, _count - 1);
        Interlocked.Add(ref retainedBytes, -record.Cost);
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

    /// <summary>A remembered key: pending (no <see cref="Completion"/>) while its publish is being stored.</summary>
    private struct Record
    {
        public UInt128 Fingerprint;
        public long ExpiresAtTicks;
        public long Cost;

        /// <summary>Which completion recorded it (from 1), so that a sweep removes that one and not a later claim of the same key.</summary>
        public long Completion;

        /// <summary>A one-topic publish's answer.</summary>
        public PublishResult One;

        /// <summary>A multi-topic publish's answers; null for one topic.</summary>
        public PublishResult[]? Many;

        public readonly bool Completed => Completion != 0;

        public readonly PublishResult[] Answer() => Many ?? [One];
    }

    /// <summary>The first 128 bits of the SHA-256 of an idempotency key and of its request's fingerprint.</summary>
    public readonly record struct KeyDigest(UInt128 Key, UInt128 Fingerprint);
}
