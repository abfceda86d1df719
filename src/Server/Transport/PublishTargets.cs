using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Transport;

/// <summary>
/// The query of a publish to several topics: <c>topics=14,15~9f3c0a1b2c3d4e5f,16</c>, each topic id
/// optionally followed by <c>~epoch</c>, the incarnation it must be (the <c>If-Match</c> of one topic),
/// as in the compact form of a subscription's query.
/// </summary>
internal static class PublishTargets
{
    public const string Parameter = "topics";

    private const string Unnamed = "Name the topics once, as topics=14,15~<epoch>,16 (a comma-separated list of topic ids, each optionally with ~ and the epoch it must have).";

    /// <summary>Reads the targets; false with the parameter at fault and why, changing nothing.</summary>
    public static bool TryParse(HttpRequest request, int maxTopics, List<PublishTarget> targets, out string parameter, out string error)
    {
        parameter = Parameter;
        error = "";
        foreach (var (name, _) in request.Query)
        {
            if (name != Parameter)
            {
                parameter = name;
                error = $"'{name}' is not a parameter of a publish to several topics: send only topics=14,15~<epoch>,16.";
                return false;
            }
        }
        var values = request.Query[Parameter];
        if (values.Count != 1)
        {
            error = Unnamed;
            return false;
        }
        return TryParse(values[0], maxTopics, targets, out error);
    }

    /// <summary>
    /// Reads a list of targets, <c>14,15~9f3c0a1b2c3d4e5f,16</c>, as a query's <c>topics</c> or a WebSocket
    /// publish frame's give it; false with why, having added nothing that counts (the caller drops <paramref name="targets"/>).
    /// </summary>
    public static bool TryParse(string? value, int maxTopics, List<PublishTarget> targets, out string error)
    {
        error = "";
        if (string.IsNullOrEmpty(value))
        {
            error = Unnamed;
            return false;
        }
        var seen = new HashSet<long>();
        foreach (var range in value.AsSpan().Split(','))
        {
            var item = value.AsSpan()[range];
            if (targets.Count == maxTopics)
            {
                error = $"A publish names at most {maxTopics} topics (Laharsub:MaxTopicsPerPublish): split the publish, or raise the limit.";
                return false;
            }
            var tilde = item.IndexOf('~');
            var idText = tilde < 0 ? item : item[..tilde];
            if (!PlainInteger.TryParseId(idText, out var topicId))
            {
                error = Problems.NotAnId(idText.ToString(), "topic id");
                return false;
            }
            string? epoch = null;
            if (tilde >= 0)
            {
                var epochText = item[(tilde + 1)..];
                if (!EpochText.IsValid(epochText))
                {
                    error = $"'{epochText}' after topic {topicId} is not an epoch: 1 to {EpochText.MaxLength} characters of [0-9A-Za-z_-], as a topic's info or a publish answer gives it.";
                    return false;
                }
                epoch = epochText.ToString();
            }
            if (!seen.Add(topicId))
            {
                error = $"Topic {topicId} is named twice: name each topic once.";
                return false;
            }
            targets.Add(new PublishTarget(topicId, epoch));
        }
        return true;
    }
}
