namespace Laharsub.Server.Storage;

/// <summary>One topic of a <see cref="ILaharsubStore.PublishManyAsync"/>: its id, and the incarnation the publisher expects, if any.</summary>
/// <param name="TopicId">The topic.</param>
/// <param name="IfEpoch">Publish only to this incarnation of the topic (<see cref="PublishStatus.EpochMismatch"/> otherwise); <see langword="null"/> for any.</param>
/// <param name="IfVersion">
/// Publish only while the topic's last message id (a state topic's version) is this one, checked in the same
/// step as the append (<see cref="PublishStatus.VersionMismatch"/> otherwise): a compare-and-set. <see langword="null"/> for any.
/// An epoch mismatch outranks a version mismatch.
/// </param>
public readonly record struct PublishTarget(long TopicId, string? IfEpoch = null, long? IfVersion = null)
{
    /// <summary>
    /// Checks the targets of a <see cref="ILaharsubStore.PublishManyAsync"/> as every store must: at least one,
    /// at most <paramref name="maxTopics"/>, positive ids, none twice.
    /// </summary>
    /// <param name="targets">The targets.</param>
    /// <param name="maxTopics">The store's <see cref="LaharsubStoreOptions.MaxTopicsPerPublish"/>.</param>
    /// <exception cref="ArgumentException">They are not.</exception>
    public static void ThrowIfInvalid(ReadOnlySpan<PublishTarget> targets, int maxTopics)
    {
        if (targets.IsEmpty || targets.Length > maxTopics)
        {
            throw new ArgumentException($"A publish names 1 to {maxTopics} topics (MaxTopicsPerPublish), not {targets.Length}.", nameof(targets));
        }
        var seen = new HashSet<long>(targets.Length);
        foreach (var target in targets)
        {
            if (target.TopicId <= 0 || !seen.Add(target.TopicId))
            {
                throw new ArgumentException($"Topic {target.TopicId} is not a positive id, or is named twice.", nameof(targets));
            }
        }
    }
}
