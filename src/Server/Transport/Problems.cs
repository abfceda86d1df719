using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Transport;

/// <summary>The problem details Laharsub answers with; each says what was wrong and what to do.</summary>
internal static class Problems
{
    /// <summary>
    /// A 400 naming the bad parameter in errors; detail repeats it, since that is the message generated
    /// clients give their exceptions (the title only says that validation failed).
    /// </summary>
    public static ValidationProblem Invalid(string parameter, string message) =>
        TypedResults.ValidationProblem(new Dictionary<string, string[]> { [parameter] = [message] }, detail: $"{parameter}: {message}");

    public static ProblemHttpResult TopicNotFound(long topicId) => TypedResults.Problem(
        title: "Topic not found",
        detail: $"Topic {topicId} does not exist: it was never created, or it was deleted. Create a topic with POST to the topics collection.",
        statusCode: StatusCodes.Status404NotFound,
        extensions: new Dictionary<string, object?> { ["topicId"] = topicId });

    /// <summary>A write a presence companion topic refuses: only the server publishes its events, and it goes with its topic.</summary>
    public static ProblemHttpResult PresenceTopic(long topicId, string what) => TypedResults.Problem(
        title: "Presence topic",
        detail: $"Topic {topicId} is a presence companion topic: {what}",
        statusCode: StatusCodes.Status409Conflict,
        extensions: new Dictionary<string, object?> { ["topicId"] = topicId });

    /// <summary>The refusal of a publish to a presence companion topic.</summary>
    public static ProblemHttpResult PresenceTopicPublish(long topicId) =>
        PresenceTopic(topicId, "only the server publishes to it (presence events). Subscribe to it to receive them.");

    /// <summary>A topic without presence asked for its members.</summary>
    public static ProblemHttpResult NoPresence(long topicId) => TypedResults.Problem(
        title: "Topic has no presence",
        detail: $"Topic {topicId} was not created with presence; create a topic with {{\"presence\":true}} to have it.",
        statusCode: StatusCodes.Status409Conflict,
        extensions: new Dictionary<string, object?> { ["topicId"] = topicId });

    /// <summary>A subscription whose identity a topic has no room for: it would be one member more than the limit.</summary>
    public static ProblemHttpResult PresenceFull(long topicId, int maxMembers) => TypedResults.Problem(
        title: "Topic full of members",
        detail: $"Topic {topicId} has its maximum of {maxMembers} present members (Laharsub:Presence:MaxMembersPerTopic): this subscription's identity was not added and nothing was subscribed. Retry after members leave, or subscribe without an identity (observers are not members).",
        statusCode: StatusCodes.Status409Conflict,
        extensions: new Dictionary<string, object?> { ["topicId"] = topicId, ["maxMembersPerTopic"] = maxMembers });

    /// <summary>Why a poll or stream was refused before it delivered anything (<see cref="Delivery.PollResult.RefusedTopicId"/>).</summary>
    public static ProblemHttpResult Refused(Delivery.PollResult result, int maxMembers) =>
        result.UnknownTopicId is { } unknown ? TopicNotFound(unknown)
        : result.NotAStateTopicId is { } plain ? FieldProblem(StatusCodes.Status400BadRequest, "Topic holds no state", "topics",
            $"The cursor 'state' asks for topic {plain}'s document, but the topic holds no state (it was created without {{\"state\":true}}). Nothing was subscribed. Subscribe to it with a message id, or without a cursor.",
            new Dictionary<string, object?> { ["topicId"] = plain })
        : PresenceFull(result.PresenceFullTopicId!.Value, maxMembers);

    /// <summary>A state operation on a topic that exists but holds no state.</summary>
    public static ProblemHttpResult NotAStateTopic(long topicId) => TypedResults.Problem(
        title: "Topic holds no state",
        detail: $"Topic {topicId} exists but holds no state: it was created without {{\"state\":true}}. Read its messages instead, or create a topic with state.",
        statusCode: StatusCodes.Status404NotFound,
        type: NotAStateTopicType,
        extensions: new Dictionary<string, object?> { ["topicId"] = topicId });

    /// <summary>The problem type of <see cref="NotAStateTopic"/>, which tells it from an unknown topic's 404.</summary>
    public const string NotAStateTopicType = "urn:laharsub:problem:not-a-state-topic";

    /// <summary>A write to a state topic in another content type than its kind takes (a patch, or a whole document for PUT).</summary>
    public static ProblemHttpResult UnsupportedStateContentType(string? contentType, bool put) => FieldProblem(StatusCodes.Status415UnsupportedMediaType,
        "Unsupported content type", "Content-Type", put
            ? $"'{contentType}' is not JSON: the state of a topic is replaced with a JSON object sent as application/json."
            : $"'{contentType}' is not a merge patch: a state topic takes application/merge-patch+json (RFC 7396) bodies, or PUT its state (application/json) to replace the whole document.");

    /// <summary>A problem with a status of its own that names the field in <c>errors</c>, as <see cref="Invalid"/> does for a 400.</summary>
    public static ProblemHttpResult FieldProblem(int statusCode, string title, string field, string detail, Dictionary<string, object?>? extensions = null)
    {
        extensions ??= [];
        extensions["errors"] = new Dictionary<string, string[]> { [field] = [detail] };
        return TypedResults.Problem(title: title, detail: $"{field}: {detail}", statusCode: statusCode, extensions: extensions);
    }

    public static ProblemHttpResult Status(int statusCode, string title, string detail) =>
        TypedResults.Problem(title: title, detail: detail, statusCode: statusCode);

    /// <summary>Parses a topic id from a path or query: a positive 64-bit integer in plain digits.</summary>
    public static bool TryParseId(string? text, out long id) => PlainInteger.TryParseId(text, out id);

    /// <inheritdoc cref="TryParseId(string?, out long)"/>
    public static bool TryParseId(ReadOnlySpan<char> text, out long id) => PlainInteger.TryParseId(text, out id);

    public static string NotAnId(string? text, string what) => PlainInteger.NotAnId(text, what);
}
