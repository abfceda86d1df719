namespace Laharsub.Client;

/// <summary>One page of the topic list, in id order.</summary>
/// <param name="Topics">The topics on this page.</param>
/// <param name="HasMore">Whether more topics may follow; ask for them with <see cref="NextAfterTopicId"/>.</param>
public sealed record TopicPage(IReadOnlyList<TopicInfo> Topics, bool HasMore)
{
    /// <summary>
    /// The <c>afterTopicId</c> that asks for the next page: where the server's scan stopped (a filtered
    /// page may end before it, or be empty), else the last topic id on this page, or 0 when the page is empty.
    /// </summary>
    public long NextAfterTopicId => ScannedTo ?? (Topics.Count == 0 ? 0 : Topics[^1].TopicId);

    /// <summary>The <c>after</c> of the server's next link, when it sent one.</summary>
    internal long? ScannedTo { get; init; }
}
