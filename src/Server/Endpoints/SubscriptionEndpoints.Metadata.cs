using Laharsub.Server.Transport;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Endpoints;

/// <summary>
/// The subscription's answers, which an API description (OpenAPI) cannot infer: its handler writes them itself
/// (<see cref="Poll"/> says why), the poll's answer in either format or a stream, and its problems have one type whatever their status.
/// The query parameters are parsed by <see cref="SubscriptionQuery"/>, not bound, so the standalone
/// host's document transformer describes them.
/// </summary>
internal static partial class SubscriptionEndpoints
{
    private static RouteHandlerBuilder DescribePoll(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Long poll many topics at once")
        .WithDescription("A plain GET is the long poll: it answers at once when any subscription has messages or a notice, otherwise when one arrives, or `204` after `timeout` seconds; `Accept` chooses the format, `application/json` (the default) or `multipart/mixed`. "
            + "With `Accept: text/event-stream` the same subscription is a Server-Sent Events stream: each message an event whose data is the message's JSON object, each notice an `event: notice`, every event's `id` the cursors to resume from (sent back as `Last-Event-ID`). "
            + "A WebSocket upgrade (subprotocol `laharsub.v1`) makes it a WebSocket whose JSON frames carry messages and notices, and take `subscribe`, `unsubscribe` and `publish` frames. docs/protocol.md, \"Streams\", has the details.")
        .Produces(StatusCodes.Status200OK, responseType: null, "application/json", "multipart/mixed", "text/event-stream")
        .Produces(StatusCodes.Status204NoContent)
        .ProducesValidationProblem()
        .ProducesProblem(StatusCodes.Status404NotFound)
        .ProducesProblem(StatusCodes.Status406NotAcceptable);
}
