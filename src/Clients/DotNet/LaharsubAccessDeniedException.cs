using System.Net;

namespace Laharsub.Client;

/// <summary>
/// The server refused the request with <c>403</c>: the access token does not grant the operation on the
/// topic. Never retried, since the same token would be refused again; a subscription that gets it ends,
/// naming the topic, and nothing was changed on the server.
/// </summary>
public sealed class LaharsubAccessDeniedException : LaharsubException
{
    /// <summary>Creates the exception from a <c>403</c> answer's problem details.</summary>
    /// <param name="title">The problem's title.</param>
    /// <param name="detail">The server's explanation: what the token grants and what it lacks.</param>
    /// <param name="operation">The operation refused: <c>create</c>, <c>publish</c>, <c>subscribe</c>, <c>list</c> or <c>delete</c>.</param>
    /// <param name="topicId">The topic refused; for a poll, the first forbidden topic of the subscription.</param>
    public LaharsubAccessDeniedException(string? title, string? detail, string? operation, long? topicId)
        : base(HttpStatusCode.Forbidden, title, detail, topicId: topicId)
    {
        Operation = operation;
    }

    /// <summary>The operation the token may not do, as the server named it (<c>subscribe</c>, say).</summary>
    public string? Operation { get; }
}
