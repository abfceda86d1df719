using System.Net;
using System.Text;

namespace Laharsub.Client;

/// <summary>
/// The server refused a request (a 4xx answer, or a 5xx that persisted through every retry).
/// Carries the HTTP status and the server's RFC 9457 problem details, which say what was wrong.
/// </summary>
public class LaharsubException : Exception
{
    private static readonly IReadOnlyDictionary<string, string[]> NoErrors = new Dictionary<string, string[]>();

    /// <summary>Creates an exception for a refused request.</summary>
    /// <param name="statusCode">The HTTP status the server answered with.</param>
    /// <param name="title">The problem's title, if the server sent one.</param>
    /// <param name="detail">The problem's detail, if the server sent one.</param>
    /// <param name="errors">Validation errors keyed by the offending parameter, if any.</param>
    /// <param name="topicId">The topic the problem is about, if the server named one.</param>
    public LaharsubException(HttpStatusCode statusCode, string? title, string? detail,
        IReadOnlyDictionary<string, string[]>? errors = null, long? topicId = null)
        : base(FormatMessage(statusCode, title, detail, errors))
    {
        StatusCode = statusCode;
        Title = title;
        Detail = detail;
        Errors = errors ?? NoErrors;
        TopicId = topicId;
    }

    /// <summary>For refusals that carry their own explanation (<see cref="EpochMismatchException"/>).</summary>
    private protected LaharsubException(string message, HttpStatusCode statusCode, string? title, string? detail, long? topicId)
        : base(message)
    {
        StatusCode = statusCode;
        Title = title;
        Detail = detail;
        Errors = NoErrors;
        TopicId = topicId;
    }

    /// <summary>The HTTP status the server answered with.</summary>
    public HttpStatusCode StatusCode { get; }

    /// <summary>The problem's short title, e.g. <c>Topic not found</c>.</summary>
    public string? Title { get; }

    /// <summary>The server's explanation of this occurrence, e.g. which topic does not exist and what to do.</summary>
    public string? Detail { get; }

    /// <summary>For validation errors (<c>400</c>): the messages keyed by the offending parameter; empty otherwise.</summary>
    public IReadOnlyDictionary<string, string[]> Errors { get; }

    /// <summary>The topic the problem is about, when the server named one (an unknown topic in a poll).</summary>
    public long? TopicId { get; }

    /// <summary>The <c>epoch</c> extension of the problem (a <c>412</c> names the topic's current epoch).</summary>
    internal string? ProblemEpoch { get; init; }

    /// <summary>The <c>version</c> extension of the problem (a state write's <c>412</c> names the document's current version).</summary>
    internal long? ProblemVersion { get; init; }

    private static string FormatMessage(HttpStatusCode statusCode, string? title, string? detail, IReadOnlyDictionary<string, string[]>? errors)
    {
        var message = new StringBuilder("Laharsub answered ").Append((int)statusCode).Append(' ').Append(statusCode);
        if (!string.IsNullOrEmpty(title))
        {
            message.Append(" (").Append(title).Append(')');
        }
        message.Append('.');
        if (!string.IsNullOrEmpty(detail))
        {
            message.Append(' ').Append(detail);
        }
        if (errors is not null)
        {
            foreach (var (parameter, messages) in errors)
            {
                var entry = $"{parameter}: {string.Join(' ', messages)}";
                // The server's detail may already say it (a validation problem's detail names the parameter and its error).
                if (detail?.Contains(entry, StringComparison.Ordinal) != true)
                {
                    message.Append(' ').Append(entry);
                }
            }
        }
        return message.ToString();
    }
}
