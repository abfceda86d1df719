using Laharsub.Server.Transport;
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
        .WithDescription("With no body (or JSON `null`) the topic has no label and no presence; `{\"label\":\"orders-eu\",\"presence\":true,\"state\":true}` gives it any of them (`state`: a JSON document changed by merge patches). `Location` is the new topic's URL and `ETag` its epoch in quotes.")
        .ProducesProblem(StatusCodes.Status409Conflict);

    private static RouteHandlerBuilder DescribeDeleteTopic(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Delete a topic")
        .WithDescription("Deletes the topic and its messages; polls waiting on it are answered at once with a `topicDeleted` notice.")
        .ProducesProblem(StatusCodes.Status404NotFound);

    private static RouteHandlerBuilder DescribePublish(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Publish a message")
        .WithDescription("The request body becomes one message, kept byte for byte with its `Content-Type`: any concrete media type (`application/octet-stream` without one); a wildcard such as `*/*` is refused with `400`. With `Idempotency-Key`, a retry within `IdempotencyKeyLifetime` gets the first answer and publishes nothing. On a state topic the body must be a JSON merge patch (`application/merge-patch+json`, else `415`), applied to the document; `If-Match: \"<epoch>:<version>\"` publishes only while the topic is at that version (`412` otherwise).")
        .Produces<PublishedMessage>(StatusCodes.Status201Created)
        .ProducesProblem(StatusCodes.Status415UnsupportedMediaType)
        .ProducesPublishRefusals();

    private static RouteHandlerBuilder DescribePublishMany(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Publish one message to several topics")
        .WithDescription("The request body becomes one message in every topic of `topics` (`topics=14,15~<epoch>,16`: up to `MaxTopicsPerPublish` distinct topic ids, each optionally with `~` and the epoch it must have), all or none: a missing topic (`404`), another incarnation than its epoch (`412`) or too little room for every copy (`507`) publishes nothing anywhere, and the problem's `topics` extension names each refusing topic and why. The answer lists each message's id in the query's order. With `Idempotency-Key`, a retry within `IdempotencyKeyLifetime` gets the first answer and publishes nothing.")
        .Produces<PublishedMessages>(StatusCodes.Status201Created)
        .ProducesPublishRefusals();

    private static RouteHandlerBuilder DescribeGetState(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Get a state topic's document")
        .WithDescription("The document of a topic created with `{\"state\":true}`: the JSON object itself. `ETag` is `\"<epoch>:<version>\"` (the version is the id of the last message applied); `If-None-Match` with it answers `304`. A topic without state is a `404` of type `not-a-state-topic`.")
        .Produces(StatusCodes.Status200OK, contentType: "application/json")
        .Produces(StatusCodes.Status304NotModified)
        .ProducesProblem(StatusCodes.Status404NotFound);

    private static RouteHandlerBuilder DescribePutState(this RouteHandlerBuilder endpoint) => endpoint
        .WithSummary("Replace a state topic's document")
        .WithDescription("The body, a JSON object (`application/json`), becomes the document, stored as the topic's next message (its id is the new version). `If-Match: \"<epoch>:<version>\"` replaces only while the document is at that version (`412` with `epoch` and `version` otherwise). The answer's `ETag` is the new version. Larger than `MaxStateBytes` is a `413`; not an object a `400`.")
        .Produces<PublishedMessage>(StatusCodes.Status200OK)
        .ProducesProblem(StatusCodes.Status415UnsupportedMediaType)
        .ProducesPublishRefusals();

    /// <summary>The refusals both publishes share: bad input, a missing or other topic, the key's 409 and 422, too large, full.</summary>
    private static RouteHandlerBuilder ProducesPublishRefusals(this RouteHandlerBuilder endpoint) => endpoint
        .ProducesValidationProblem()
        .ProducesProblem(StatusCodes.Status404NotFound)
        .ProducesProblem(StatusCodes.Status409Conflict)
        .ProducesProblem(StatusCodes.Status412PreconditionFailed)
        .ProducesProblem(StatusCodes.Status413PayloadTooLarge)
        .ProducesProblem(StatusCodes.Status422UnprocessableEntity)
        .ProducesProblem(StatusCodes.Status507InsufficientStorage);
}
