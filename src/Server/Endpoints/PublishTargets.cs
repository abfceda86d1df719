using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Server.Endpoints;

/// <summary>
/// The query of a publish to several topics: <c>topics=14,15~9f3c0a1b2c3d4e5f,16</c>, each topic id
/// optionally followed by <c>~epoch</c>, the incarnation it must be (the <c>If-Match</c> of one topic),
/// as in the compact form of a subscription's query.
/// </summary>
internal static class PublishTargets
{
    public const string Parameter = "topics";

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
        if (values.Count != 1 || string.IsNullOrEmpty(values[0]))
        {
            error = "Name the topics once, as topics=14,15~<epoch>,16 (a comma-separated list of topic ids, each optionally with ~ and the epoch it must have).";
            return false;
        }
        var seen = new HashSet<long>();
        foreach (var range in values[0].AsSpan().Split(','))
        {
            var item = values[0].AsSpan()[range];
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
