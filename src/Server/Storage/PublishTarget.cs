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
        // A set only for many targets: a publish names one topic or a few, and checking each against those before it allocates nothing.
        var seen = targets.Length > 16 ? new HashSet<long>(targets.Length) : null;
        for (var i = 0; i < targets.Length; i++)
        {
            var topicId = targets[i].TopicId;
            if (topicId <= 0 || (seen is null ? NamedBefore(targets, i) : !seen.Add(topicId)))
            {
                throw new ArgumentException($"Topic {topicId} is not a positive id, or is named twice.", nameof(targets));
            }
        }
    }

    private static bool NamedBefore(ReadOnlySpan<PublishTarget> targets, int index)
    {
        for (var i = 0; i < index; i++)
        {
            if (targets[i].TopicId == targets[index].TopicId)
            {
                return true;
            }
        }
        return false;
    }
}
