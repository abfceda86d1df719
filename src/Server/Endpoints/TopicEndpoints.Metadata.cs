using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Endpoints;

/// <summary>
/// What an API description (OpenAPI) cannot infer from the handlers' typed results: every
/// <c>ProblemHttpResult</c> has one type whatever its status, so each status a handler answers with a
/// problem is named here, next to the handlers that produce it; and the publish writes its answers
/// itself (<see cref="MapTopics"/> says why), so all of them are named.
/// </summary>
internal static partial class TopicEndpoints
{
    private static RouteHandlerBuilder DescribeListTopics(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("List topics")
        .WithDescription("Topics in id order, keyset-paged: pass the last id of a page as `after` to get the next one; `next` is that page's URL while more may follow.");

    private static RouteHandlerBuilder DescribeGetTopic(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Get a topic's info")
        .WithDescription("The topic's ids, retention and waiting polls; `ETag` is its epoch in quotes.")
        .ProducesProblem(StatusCodes.Status404NotFound);

    private static RouteHandlerBuilder DescribeCreateTopic(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Create a topic")
        .WithDescription("Any request body is ignored. `Location` is the new topic's URL and `ETag` its epoch in quotes.")
        .ProducesProblem(StatusCodes.Status409Conflict);

    private static RouteHandlerBuilder DescribeDeleteTopic(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Delete a topic")
        .WithDescription("Deletes the topic and its messages; polls waiting on it are answered at once with a `topicDeleted` notice.")
        .ProducesProblem(StatusCodes.Status404NotFound);

    private static RouteHandlerBuilder DescribePublish(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Publish a message")
        .WithDescription("The request body becomes one message, kept byte for byte with its `Content-Type`: any concrete media type (`application/octet-stream` without one); a wildcard such as `*/*` is refused with `400`.")
        .Produces<PublishedMessage>(StatusCodes.Status201Created)
        .ProducesValidationProblem()
        .ProducesProblem(StatusCodes.Status404NotFound)
        .ProducesProblem(StatusCodes.Status412PreconditionFailed)
        .ProducesProblem(StatusCodes.Status413PayloadTooLarge)
        .ProducesProblem(StatusCodes.Status507InsufficientStorage);
}
