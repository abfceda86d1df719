namespace Laharsub.Client;

/// <summary>One page of a topic's member list, ordered by member id (ordinal).</summary>
/// <param name="TopicId">The topic.</param>
/// <param name="Occupancy">How many members the topic has in all, on every page.</param>
/// <param name="Members">The members on this page; empty when <see cref="MembersShown"/> is false.</param>
/// <param name="Next">The member id to pass as <c>after</c> for the next page; <see langword="null"/> on the last page.</param>
public sealed record PresencePage(long TopicId, int Occupancy, IReadOnlyList<PresenceMember> Members, string? Next)
{
    /// <summary>
    /// Whether the server showed the members: false when the caller's token grants <c>subscribe</c> on the
    /// topic but not <c>presence</c>, which reveals the occupancy alone (Jwt mode).
    /// </summary>
    public bool MembersShown { get; init; } = true;
}
