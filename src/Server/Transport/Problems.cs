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
        result.UnknownTopicId is { } unknown ? TopicNotFound(unknown) : PresenceFull(result.PresenceFullTopicId!.Value, maxMembers);

    public static ProblemHttpResult Status(int statusCode, string title, string detail) =>
        TypedResults.Problem(title: title, detail: detail, statusCode: statusCode);

    /// <summary>Parses a topic id from a path or query: a positive 64-bit integer in plain digits.</summary>
    public static bool TryParseId(string? text, out long id) => PlainInteger.TryParseId(text, out id);

    /// <inheritdoc cref="TryParseId(string?, out long)"/>
    public static bool TryParseId(ReadOnlySpan<char> text, out long id) => PlainInteger.TryParseId(text, out id);

    public static string NotAnId(string? text, string what) => PlainInteger.NotAnId(text, what);
}
