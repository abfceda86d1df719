using System.Security.Claims;
using Microsoft.AspNetCore.Authorization;

namespace Laharsub.Server.Access;

/// <summary>
/// Whether a caller may do an operation on topics: the one decision that the pipeline's access filter, the fast
/// path and a WebSocket's frames all ask. Jwt mode decides by the caller's grants, looking a topic up (its label,
/// or the topic whose presence it holds) only when no id pattern decides; Host mode asks the application's
/// authorization (<see cref="LaharsubRequirement"/> on a <see cref="LaharsubTopic"/>).
/// </summary>
internal sealed class TopicAccess(TopicLabelLookup labels)
{
    /// <summary>
    /// <paramref name="operation"/> (or <paramref name="alternative"/>, when it grants the same answer) on one
    /// topic; the refusal, or null when allowed.
    /// </summary>
    public async ValueTask<AccessDenial?> CheckAsync(AccessCaller caller, LaharsubOperation operation, long topicId,
        CancellationToken cancellationToken, LaharsubOperation? alternative = null)
    {
        if (caller.Grants is not { } permissions)
        {
            var topic = new LaharsubTopic(topicId, await labels.GetLabelAsync(topicId, cancellationToken).ConfigureAwait(false));
            return await caller.AuthorizesAsync(operation, topic, cancellationToken).ConfigureAwait(false)
                || (alternative is { } either && await caller.AuthorizesAsync(either, topic, cancellationToken).ConfigureAwait(false))
                ? null : new AccessDenial(operation, topicId);
        }
        if (permissions.AllowsById(operation, topicId) || (alternative is { } other && permissions.AllowsById(other, topicId)))
        {
            return null;
        }
        if (permissions.HasLabelPatterns(operation) || (alternative is { } second && permissions.HasLabelPatterns(second)))
        {
            var label = await labels.GetLabelAsync(topicId, cancellationToken).ConfigureAwait(false);
            if (permissions.AllowsLabel(operation, label) || (alternative is { } third && permissions.AllowsLabel(third, label)))
            {
                return null;
            }
        }
        return new AccessDenial(operation, topicId);
    }

    /// <summary>Whether every topic of a request is allowed without reading any topic (no list needed then).</summary>
    public static bool AllowsEveryTopic(AccessCaller caller, LaharsubOperation operation) =>
        caller.Grants is { } permissions && permissions.AllowsEveryTopic(operation)
        && (operation != LaharsubOperation.Subscribe || permissions.AllowsEveryTopic(LaharsubOperation.Presence));

    /// <summary>
    /// A poll (<c>subscribe</c>) or a publish to several topics (<c>publish</c>): the operation on every topic, in
    /// the request's order; the first refusal, or null when all are allowed. Subscribing to a presence companion
    /// topic needs <c>presence</c> on its topic, since its events are who is present.
    /// </summary>
    public async ValueTask<AccessDenial?> CheckEveryAsync(AccessCaller caller, LaharsubOperation operation, IReadOnlyList<long> topicIds,
        CancellationToken cancellationToken)
    {
        if (AllowsEveryTopic(caller, operation))
        {
            return null;
        }
        var companionsChecked = operation != LaharsubOperation.Subscribe || caller.Grants?.AllowsEveryTopic(LaharsubOperation.Presence) == true;
        // The first forbidden topic refuses the request whole: answering for the allowed topics alone would let
        // a client believe it is subscribed (or published) to all of them.
        // By index: a foreach over the interface would allocate its enumerator on every poll.
        for (var i = 0; i < topicIds.Count; i++)
        {
            var topicId = topicIds[i];
            if (!companionsChecked && await labels.GetPresenceOwnerAsync(topicId, cancellationToken).ConfigureAwait(false) is { } owner)
            {
                if (await CheckAsync(caller, LaharsubOperation.Presence, owner, cancellationToken).ConfigureAwait(false) is { } presence)
                {
                    return presence;
                }
                continue;
            }
            if (await CheckAsync(caller, operation, topicId, cancellationToken).ConfigureAwait(false) is { } denial)
            {
                return denial;
            }
        }
        return null;
    }

    /// <summary>An operation on no particular topic: creating one with <paramref name="label"/>, the listing, the admin data.</summary>
    public static async ValueTask<bool> AllowsAsync(AccessCaller caller, LaharsubOperation operation, string? label, CancellationToken cancellationToken) =>
        caller.Grants is { } permissions
            ? operation == LaharsubOperation.Create ? permissions.AllowsLabel(operation, label) : permissions.AllowsEveryTopic(operation)
            : await caller.AuthorizesAsync(operation, new LaharsubTopic(null, label), cancellationToken).ConfigureAwait(false);
}

/// <summary>
/// Who calls, as access control found them: Jwt mode's grants (a token's, or anonymous callers'); in Host mode the
/// application's user and its authorization service (the request's, which may hold scoped handlers); in Backend mode
/// the caller's credentials and the backend that decides.
/// </summary>
internal readonly record struct AccessCaller(LaharsubPermissions? Grants, ClaimsPrincipal? User = null, IAuthorizationService? Authorization = null,
    BackendCredentials? Credentials = null, BackendAuthorization? Backend = null)
{
    /// <summary>Host or Backend mode: whether the application allows <paramref name="operation"/> on <paramref name="topic"/>.</summary>
    public async ValueTask<bool> AuthorizesAsync(LaharsubOperation operation, LaharsubTopic topic, CancellationToken cancellationToken) =>
        Backend is { } backend
            ? await backend.AllowsAsync(Credentials!, operation, topic, cancellationToken).ConfigureAwait(false)
            : (await Authorization!.AuthorizeAsync(User ?? new ClaimsPrincipal(), topic, LaharsubRequirement.For(operation)).ConfigureAwait(false)).Succeeded;
}

/// <summary>Why a request is refused: the operation its caller may not do, on this topic.</summary>
internal readonly record struct AccessDenial(LaharsubOperation Operation, long TopicId);
