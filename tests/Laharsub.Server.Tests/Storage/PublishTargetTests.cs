using Laharsub.Server.Storage;

namespace Laharsub.Server.Tests.Storage;

/// <summary>The targets every store checks before a multi-topic publish: a topic named twice is refused, for few targets (compared pairwise) and many (a set).</summary>
public sealed class PublishTargetTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(16)]
    [InlineData(17)]
    [InlineData(100)]
    public void DistinctPositiveTopicsPass(int count)
    {
        var targets = Enumerable.Range(1, count).Select(id => new PublishTarget(id)).ToArray();

        PublishTarget.ThrowIfInvalid(targets, maxTopics: 100);
    }

    [Theory]
    [InlineData(2, 0, 1)]
    [InlineData(16, 3, 15)]
    [InlineData(17, 0, 16)]
    [InlineData(100, 98, 99)]
    public void ATopicNamedTwiceIsRefused(int count, int first, int second)
    {
        var targets = Enumerable.Range(1, count).Select(id => new PublishTarget(id)).ToArray();
        targets[second] = targets[first];

        var refused = Assert.Throws<ArgumentException>(() => PublishTarget.ThrowIfInvalid(targets, maxTopics: 100));
        Assert.Contains($"Topic {targets[first].TopicId} ", refused.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-3)]
    public void ATopicIdBelowOneIsRefused(long topicId) =>
        Assert.Throws<ArgumentException>(() => PublishTarget.ThrowIfInvalid([new PublishTarget(1), new PublishTarget(topicId)], maxTopics: 100));
}
