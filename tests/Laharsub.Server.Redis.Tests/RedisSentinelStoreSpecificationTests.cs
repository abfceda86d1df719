using Laharsub.Testing;

namespace Laharsub.Server.Redis.Tests;

/// <summary>
/// The whole store specification, state topics included, through Sentinel (a primary, a replica and a sentinel): the
/// store finds the primary through the sentinel and runs every script there, as a Sentinel deployment does.
/// </summary>
public sealed class RedisSentinelStoreSpecificationTests(RedisSentinelStoreSpecificationTests.PrivateSentinelSet sentinel)
    : RedisSpecification, IClassFixture<RedisSentinelStoreSpecificationTests.PrivateSentinelSet>
{
    protected override string Configuration => sentinel.Set.Configuration;

    /// <summary>One Sentinel setup for the class's facts.</summary>
    public sealed class PrivateSentinelSet : PrivateFixture<RedisSentinelSet>
    {
        public RedisSentinelSet Set => Started;

        protected override Task<RedisSentinelSet> StartAsync() => RedisSentinelSet.StartAsync();
    }
}
