using System.Text.Json;
using Laharsub.Server.Access;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;

namespace Laharsub.Server.Endpoints;

// GET {prefix}/topics/{id}/presence: who is present on a topic created with presence (docs/protocol.md, "Presence").
internal static partial class TopicEndpoints
{
    private static async Task<Results<Ok<PresenceResource>, Ok<PresenceOccupancy>, ValidationProblem, ProblemHttpResult>> GetPresence(
        string topicId, string? after, string? limit, HttpContext context, ILaharsubStore store, AccessControl access, CancellationToken cancellationToken)
    {
        if (!Problems.TryParseId(topicId, out var id))
        {
            return Problems.Invalid("topicId", Problems.NotAnId(topicId, "topic id"));
        }
        var pageSize = DefaultPageSize;
        if (limit is not null && (!Wire.PlainInteger.TryParse(limit, out pageSize) || pageSize is < 1 or > MaxPageSize))
        {
            return Problems.Invalid("limit", $"'{limit}' is not a page size: use an integer from 1 to {MaxPageSize}.");
        }
        if (after is { Length: 0 })
        {
            return Problems.Invalid("after", "after is empty: leave it out for the first page, or pass the previous page's next.");
        }
        if (store is not IPresenceStore presence)
        {
            return Problems.NoPresence(id);
        }
        // Without presence on the topic (Jwt mode), only the occupancy: the access filter let the caller in on subscribe.
        var membersShown = await access.AllowsAsync(context, LaharsubOperation.Presence, id).ConfigureAwait(false);
        var page = await presence.ListMembersAsync(id, membersShown ? after : null, membersShown ? pageSize : 1, cancellationToken).ConfigureAwait(false);
        if (page is null)
        {
            return await store.GetTopicAsync(id, cancellationToken).ConfigureAwait(false) is null ? Problems.TopicNotFound(id) : Problems.NoPresence(id);
        }
        if (!membersShown)
        {
            return TypedResults.Ok(new PresenceOccupancy(id, page.Occupancy));
        }
        var members = new PresenceMemberResource[page.Members.Count];
        for (var i = 0; i < members.Length; i++)
        {
            var member = page.Members[i];
            members[i] = new PresenceMemberResource(member.Member, member.Data is null ? null : JsonElement.Parse(member.Data));
        }
        return TypedResults.Ok(new PresenceResource(id, page.Occupancy, members, page.HasMore && members.Length > 0 ? members[^1].Member : null));
    }

    private static RouteHandlerBuilder DescribeGetPresence(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Who is present on a topic")
        .WithDescription("The occupancy and a page of members (ordered by member id, `after` and `limit` as for topics) of a topic created with presence.")
        // The handler's other 200, the occupancy alone, is this page without members: the document names the page.
        .Produces<PresenceResource>(StatusCodes.Status200OK)
        .ProducesProblem(StatusCodes.Status404NotFound)
        .ProducesProblem(StatusCodes.Status409Conflict);
}
