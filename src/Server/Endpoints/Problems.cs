using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Endpoints;

/// <summary>The problem details Laharsub answers with; each says what was wrong and what to do.</summary>
internal static class Problems
{
    public static ValidationProblem Invalid(string parameter, string message) =>
        TypedResults.ValidationProblem(new Dictionary<string, string[]> { [parameter] = [message] });

    public static ProblemHttpResult TopicNotFound(long topicId) => TypedResults.Problem(
        title: "Topic not found",
        detail: $"Topic {topicId} does not exist: it was never created, or it was deleted. Create a topic with POST to the topics collection.",
        statusCode: StatusCodes.Status404NotFound,
        extensions: new Dictionary<string, object?> { ["topicId"] = topicId });

    public static ProblemHttpResult Status(int statusCode, string title, string detail) =>
        TypedResults.Problem(title: title, detail: detail, statusCode: statusCode);

    /// <summary>Parses a topic id from a path or query: a positive 64-bit integer in plain digits.</summary>
    public static bool TryParseId(string? text, out long id) => PlainInteger.TryParseId(text, out id);

    /// <inheritdoc cref="TryParseId(string?, out long)"/>
    public static bool TryParseId(ReadOnlySpan<char> text, out long id) => PlainInteger.TryParseId(text, out id);

    public static string NotAnId(string? text, string what) =>
        $"'{text}' is not a {what}: use a positive integer no greater than {long.MaxValue}.";
}
