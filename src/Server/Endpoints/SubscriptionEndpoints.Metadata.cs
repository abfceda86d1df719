using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Endpoints;

/// <summary>
/// The poll's answers, which an API description (OpenAPI) cannot infer: its handler writes them itself
/// (<see cref="Poll"/> says why), the answer in either format, and its problems have one type whatever their status.
/// The query parameters are parsed by <see cref="SubscriptionQuery"/>, not bound, so the standalone
/// host's document transformer describes them.
/// </summary>
internal static partial class SubscriptionEndpoints
{
    private static RouteHandlerBuilder DescribePoll(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Long poll many topics at once")
        .WithDescription("Answers at once when any subscription has messages or a notice, otherwise when one arrives, or `204` after `timeout` seconds. `Accept` chooses the format: `application/json` (the default) or `multipart/mixed`.")
        .Produces(StatusCodes.Status200OK, responseType: null, "application/json", "multipart/mixed")
        .Produces(StatusCodes.Status204NoContent)
        .ProducesValidationProblem()
        .ProducesProblem(StatusCodes.Status404NotFound)
        .ProducesProblem(StatusCodes.Status406NotAcceptable);
}
