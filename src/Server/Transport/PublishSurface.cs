namespace Laharsub.Server.Transport;

/// <summary>
/// How a publish names its inputs where it arrived, so that one refusal names the field the client sent:
/// REST's headers and query, or a WebSocket publish frame's properties.
/// </summary>
/// <param name="ContentTypeField">Where the content type came from.</param>
/// <param name="EpochField">Where one topic's expected epoch came from.</param>
/// <param name="KeyField">Where the idempotency key came from.</param>
/// <param name="TopicsSource">What names the topics and their epochs, in a sentence ("the query").</param>
internal sealed record PublishSurface(string ContentTypeField, string EpochField, string KeyField, string TopicsSource)
{
    public static PublishSurface Rest { get; } = new("Content-Type", "If-Match", IdempotencyKeyHeader.Name, "the query");

    public static PublishSurface Socket { get; } = new("contentType", "ifEpoch", "idempotencyKey", "the frame");
}
