using Laharsub.Server.Storage;

namespace Laharsub.Server.Delivery;

/// <summary>
/// Field-level conflation on a state topic (docs/protocol.md, "State topics"): a run of its messages composed
/// into one that does to any document what the run does, so a subscriber that skips the run still holds the
/// exact document.
/// </summary>
internal static class StateConflation
{
    /// <summary>
    /// The run (consecutive messages, the last the latest) as one message with the latest's id and time: a merge
    /// patch when every message was one, else the whole document from the run's last replacement on; null when two
    /// patches do not compose (<see cref="MergePatch.Compose"/>), for the caller to send the document instead.
    /// </summary>
    public static Message? Compose(ReadOnlySpan<Message> run)
    {
        var whole = !MergePatch.IsMergePatch(run[0].ContentType);
        var body = run[0].Body;
        for (var i = 1; i < run.Length; i++)
        {
            var message = run[i];
            if (!MergePatch.IsMergePatch(message.ContentType))
            {
                whole = true;
                body = message.Body;
            }
            else if (whole)
            {
                body = MergePatch.Apply(body.Span, message.Body.Span);
            }
            else if (MergePatch.Compose(body.Span, message.Body.Span) is { } composed)
            {
                body = composed;
            }
            else
            {
                return null;
            }
        }
        var latest = run[^1];
        return new Message(latest.TopicId, latest.Epoch, latest.MessageId, latest.PublishedAt,
            whole ? MergePatch.DocumentMediaType : MergePatch.MediaType, body, latest.TraceContext);
    }
}
