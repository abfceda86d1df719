namespace Laharsub.Server.Storage;

/// <summary>
/// Presence as leases (docs/protocol.md, "Presence"): which members are present on a topic created with
/// presence, each until its lease's expiry, with a small JSON object of data. A store that supports
/// presence implements this beside <see cref="ILaharsubStore"/> on the same object.
/// </summary>
/// <remarks>
/// Contract for implementers:
/// <list type="bullet">
/// <item>The store keeps no clock of its own for leases: callers pass the expiry and "now", so every
/// instance's leases run on its <see cref="TimeProvider"/> (clocks of a cluster are assumed synchronized
/// to well under the grace period).</item>
/// <item>Each change is reported to exactly one caller across all instances: <see cref="RenewAsync"/>
/// reports <see cref="PresenceRenewal.Joined"/> to the call that made a member present, and
/// <see cref="SweepAsync"/> returns an expired member to the one call that removed it. That caller
/// publishes the event; nobody else does.</item>
/// <item>A member whose lease has expired but who was not swept yet and renews is still the same
/// member: no join (and the sweep then finds it renewed, so no leave). This is the coalescing of flaps.</item>
/// <item>Deleting a topic with presence (<see cref="ILaharsubStore.DeleteTopicAsync"/>) deletes its
/// companion topic and its members too, without events.</item>
/// </list>
/// </remarks>
public interface IPresenceStore
{
    /// <summary>
    /// Creates a topic with presence and its companion topic, both or neither; <see langword="null"/> when
    /// <c>MaxTopics</c> leaves no room for both. The answer's <see cref="TopicInfo.PresenceTopicId"/> names the companion.
    /// With <paramref name="state"/> the topic (not its companion) holds state, as <see cref="ILaharsubStore.CreateTopicAsync"/> says.
    /// </summary>
    ValueTask<TopicInfo?> CreateTopicWithPresenceAsync(string? label = null, bool state = false, CancellationToken cancellationToken = default);

    /// <summary>
    /// Makes <paramref name="member"/> present on <paramref name="topicId"/> until <paramref name="expiresAt"/>
    /// (or keeps its later expiry), with <paramref name="data"/> (JSON text or <see langword="null"/>). Also
    /// what a lease's release is: a renewal that runs for the grace period. A member not present yet is not
    /// added when the topic already has <paramref name="maxMembers"/> members (<see cref="PresenceStatus.Full"/>,
    /// nothing stored); a present member always renews. The check and the addition are one atomic step.
    /// </summary>
    ValueTask<PresenceRenewal> RenewAsync(long topicId, string member, string? data, DateTimeOffset expiresAt, int maxMembers,
        CancellationToken cancellationToken = default);

    /// <summary>
    /// Up to <paramref name="limit"/> members of <paramref name="topicId"/> with ids ordinally after
    /// <paramref name="afterMember"/>, in ordinal order, and the occupancy; <see langword="null"/> when
    /// the topic does not exist or has no presence.
    /// </summary>
    ValueTask<PresencePage?> ListMembersAsync(long topicId, string? afterMember, int limit, CancellationToken cancellationToken = default);

    /// <summary>
    /// Publishes a presence event to a companion topic, which <see cref="ILaharsubStore.PublishAsync"/> refuses
    /// (<see cref="PublishStatus.PresenceTopic"/>) so that no client can forge events.
    /// </summary>
    ValueTask<PublishResult> PublishEventAsync(long presenceTopicId, ReadOnlyMemory<byte> body, CancellationToken cancellationToken = default);

    /// <summary>
    /// Removes up to <paramref name="limit"/> members whose leases expired at or before <paramref name="now"/>,
    /// on any topic, and returns them; each removed member is returned to exactly one call, across instances.
    /// </summary>
    ValueTask<IReadOnlyList<PresenceDeparture>> SweepAsync(DateTimeOffset now, int limit, CancellationToken cancellationToken = default);
}

/// <summary>What a renewal did.</summary>
/// <param name="Status">Whether the topic exists and has presence.</param>
/// <param name="Joined">Whether the member became present with this call (it was not present before).</param>
/// <param name="Occupancy">How many members are present right after the call.</param>
/// <param name="PresenceTopicId">The topic's companion topic, where its events go.</param>
public readonly record struct PresenceRenewal(PresenceStatus Status, bool Joined, int Occupancy, long PresenceTopicId);

/// <summary>Whether a presence operation found its topic.</summary>
public enum PresenceStatus
{
    /// <summary>Done.</summary>
    Done,

    /// <summary>The topic does not exist.</summary>
    TopicNotFound,

    /// <summary>The topic exists but was not created with presence.</summary>
    NoPresence,

    /// <summary>The topic has its maximum of members and the member is not one of them: it was not added.</summary>
    Full,
}

/// <summary>A member and its data.</summary>
/// <param name="Member">The member's identity.</param>
/// <param name="Data">Its data, JSON text, or <see langword="null"/>.</param>
public sealed record PresenceMember(string Member, string? Data);

/// <summary>One page of a topic's members.</summary>
/// <param name="Occupancy">How many members are present in all.</param>
/// <param name="Members">This page's members, in ordinal order of their ids.</param>
/// <param name="HasMore">Whether members follow the last of this page.</param>
public sealed record PresencePage(int Occupancy, IReadOnlyList<PresenceMember> Members, bool HasMore);

/// <summary>A member removed by a sweep because its lease expired.</summary>
/// <param name="TopicId">The topic it left.</param>
/// <param name="PresenceTopicId">The topic's companion topic.</param>
/// <param name="Member">The member.</param>
/// <param name="Data">Its last data, or <see langword="null"/>.</param>
/// <param name="Occupancy">How many members are present right after its removal.</param>
public sealed record PresenceDeparture(long TopicId, long PresenceTopicId, string Member, string? Data, int Occupancy);
