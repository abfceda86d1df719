using System.Security.Cryptography;
using System.Text;
using Laharsub.Server.Storage;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Transport;

namespace Laharsub.Server.Tests;

public class IdempotencyRecordsTests
{
    private static readonly LaharsubStoreOptions Options = new() { IdempotencyKeyLifetime = TimeSpan.FromTicks(100) };

    [Fact]
    public void ASweepForgetsTheExpiredKeysOnlyAndReleasesTheirBytes()
    {
        var records = new IdempotencyRecords(Options);
        long retained = 0;
        Complete(records, "early", nowTicks: 0, cost: 10, ref retained);
        Complete(records, "late", nowTicks: 50, cost: 20, ref retained);

        records.Sweep(nowTicks: 99, ref retained);
        Assert.Equal(2, records.Count);
        records.Sweep(nowTicks: 100, ref retained);

        Assert.Equal(1, records.Count);
        Assert.Equal(20, retained);
        Assert.Equal(IdempotencyRecords.Claim.Replay, records.TryBegin(Key("late"), 100, ref retained, out _));
        Assert.Equal(IdempotencyRecords.Claim.Started, records.TryBegin(Key("early"), 100, ref retained, out _));
    }

    [Fact]
    public void AKeyStoredAgainAfterItExpiredOutlivesItsFirstRecord()
    {
        var records = new IdempotencyRecords(Options);
        long retained = 0;
        Complete(records, "k", nowTicks: 0, cost: 10, ref retained);
        // A retry after the lifetime finds the record expired, removes it and stores the key again.
        Complete(records, "k", nowTicks: 150, cost: 10, ref retained);

        records.Sweep(nowTicks: 200, ref retained);

        Assert.Equal(1, records.Count);
        Assert.Equal(10, retained);
        Assert.Equal(IdempotencyRecords.Claim.Replay, records.TryBegin(Key("k"), 200, ref retained, out _));
        records.Sweep(nowTicks: 250, ref retained);
        Assert.Equal(0, records.Count);
        Assert.Equal(0, retained);
    }

    [Fact]
    public void TheFingerprintHashesTheTargetsTheContentTypeAndTheBody()
    {
        // The digest stays what instances of earlier builds compute, so that a retry answered by either matches.
        PublishTarget[] targets = [new(5, "abc"), new(7)];
        var expected = Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes("5~abc,7~,\ntext/plain; charset=é\nhello")));

        var key = IdempotencyKeyHeader.Fingerprinted("k", targets, "text/plain; charset=é", "hello"u8);

        Assert.Equal(expected, key.Fingerprint);
    }

    [Fact]
    public void TheSameKeyWithAnotherFingerprintIsAMismatch()
    {
        var records = new IdempotencyRecords(Options);
        long retained = 0;
        Complete(records, "k", nowTicks: 0, cost: 10, ref retained);

        var other = IdempotencyRecords.Digest(new IdempotencyKey("k", "another request"));

        Assert.Equal(IdempotencyRecords.Claim.Mismatch, records.TryBegin(other, 1, ref retained, out _));
        Assert.Equal(IdempotencyRecords.Claim.Started, records.TryBegin(Key("K"), 1, ref retained, out _));
    }

    [Fact]
    public void AKeyIsInProgressUntilCompletedThenReplaysItsAnswerForOneTopicOrMany()
    {
        var records = new IdempotencyRecords(Options);
        long retained = 0;
        PublishResult[] one = [new(PublishStatus.Published, 7, "epoch-a")];
        PublishResult[] many = [new(PublishStatus.Published, 3, "epoch-b"), new(PublishStatus.Published, 9, "epoch-c")];

        Assert.Equal(IdempotencyRecords.Claim.Started, records.TryBegin(Key("one"), 0, ref retained, out _));
        Assert.Equal(IdempotencyRecords.Claim.InProgress, records.TryBegin(Key("one"), 0, ref retained, out _));
        records.Complete(Key("one"), one, 0, cost: 10);
        Assert.Equal(IdempotencyRecords.Claim.Started, records.TryBegin(Key("many"), 0, ref retained, out _));
        records.Complete(Key("many"), many, 0, cost: 10);

        Assert.Equal(IdempotencyRecords.Claim.Replay, records.TryBegin(Key("one"), 1, ref retained, out var replayedOne));
        Assert.Equal(one, replayedOne);
        Assert.Equal(IdempotencyRecords.Claim.Replay, records.TryBegin(Key("many"), 1, ref retained, out var replayedMany));
        Assert.Equal(many, replayedMany);
        Assert.Equal(2, records.Count);
    }

    [Fact]
    public void AnAbandonedKeyMayBeClaimedAgainAndTheCapCountsPendingKeys()
    {
        var records = new IdempotencyRecords(new LaharsubStoreOptions { MaxIdempotencyKeys = 1 });
        long retained = 0;

        Assert.Equal(IdempotencyRecords.Claim.Started, records.TryBegin(Key("a"), 0, ref retained, out _));
        Assert.Equal(IdempotencyRecords.Claim.Full, records.TryBegin(Key("b"), 0, ref retained, out _));
        records.Abandon(Key("a"));
        Assert.Equal(0, records.Count);
        Assert.Equal(IdempotencyRecords.Claim.Started, records.TryBegin(Key("b"), 0, ref retained, out _));
    }

    [Fact]
    public void TheTableShrinksOnceABurstOfKeysHasExpired()
    {
        var records = new IdempotencyRecords(Options);
        long retained = 0;
        for (var i = 0; i < 20_000; i++)
        {
            Complete(records, $"burst-{i}", nowTicks: 0, cost: 1, ref retained);
        }
        var grown = records.Capacity;

        records.Sweep(nowTicks: 100, ref retained);

        Assert.Equal((0, 0L), (records.Count, retained));
        Assert.True(records.Capacity < grown / 4, $"capacity {records.Capacity} after the burst expired, {grown} at its height");
        Complete(records, "after", nowTicks: 100, cost: 1, ref retained);
        Assert.Equal(IdempotencyRecords.Claim.Replay, records.TryBegin(Key("after"), 101, ref retained, out _));
    }

    private static IdempotencyRecords.KeyDigest Key(string key) => IdempotencyRecords.Digest(new IdempotencyKey(key, "fingerprint"));

    private static void Complete(IdempotencyRecords records, string key, long nowTicks, long cost, ref long retained)
    {
        Assert.Equal(IdempotencyRecords.Claim.Started, records.TryBegin(Key(key), nowTicks, ref retained, out _));
        retained += cost;
        records.Complete(Key(key), [], nowTicks, cost);
    }
}
