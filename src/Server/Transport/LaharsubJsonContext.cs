using System.Text.Json.Serialization;
using System.Text.Json;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Transport;
// The answers of the topic endpoints, which the JSON context below serializes without reflection.

/// <summary>Answer to <c>POST /ps/topics</c>.</summary>
internal sealed record CreatedTopic(long TopicId, string Epoch, [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Label = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] bool? Presence = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] long? PresenceTopicId = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] bool? State = null)
{
    public static CreatedTopic From(TopicInfo topic) =>
        new(topic.TopicId, topic.Epoch, topic.Label, topic.PresenceTopicId is null ? null : true, topic.PresenceTopicId, topic.State ? true : null);
}

/// <summary>Answer to a publish.</summary>
internal sealed record PublishedMessage(long TopicId, long MessageId, string Epoch);

/// <summary>Answer to a publish to several topics: each message, in the order the query named the topics.</summary>
internal sealed record PublishedMessages(IReadOnlyList<PublishedMessage> Messages);

/// <summary>A topic that refused a publish to several topics, in the problem's <c>topics</c> extension: <c>notFound</c> or <c>epochMismatch</c> (with the current epoch).</summary>
internal sealed record RefusedTopic(long TopicId, string Reason, [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Epoch,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] long? Version = null);

/// <summary>
/// A topic as <c>GET /ps/topics/{id}</c> and the topic list show it: what the store knows, and the long
/// polls waiting on it at the instance that answers (named <c>TopicInfo</c> in the OpenAPI document).
/// </summary>
internal sealed record TopicResource(
    long TopicId,
    string Epoch,
    DateTimeOffset CreatedAt,
    long LastMessageId,
    long FirstRetainedMessageId,
    int RetainedMessages,
    long RetainedBytes,
    int WaitingPolls,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Label,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] bool? Presence = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] long? PresenceTopicId = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] long? PresenceOf = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] bool? State = null)
{
    public static TopicResource From(TopicInfo topic, int waitingPolls) => new(topic.TopicId, topic.Epoch, topic.CreatedAt,
        topic.LastMessageId, topic.FirstRetainedMessageId, topic.RetainedMessages, topic.RetainedBytes, waitingPolls, topic.Label,
        topic.PresenceTopicId is null ? null : true, topic.PresenceTopicId, topic.PresenceOf, topic.State ? true : null);
}

/// <summary>A member in <c>GET /ps/topics/{id}/presence</c>; <see cref="Data"/> is the member's JSON object, written as it is.</summary>
internal sealed record PresenceMemberResource(string Member, JsonElement? Data);

/// <summary>Answer to <c>GET /ps/topics/{id}/presence</c>: a page of members; <see cref="Next"/> is the <c>after</c> of the next page, null on the last.</summary>
internal sealed record PresenceResource(long TopicId, int Occupancy, IReadOnlyList<PresenceMemberResource> Members, string? Next);

/// <summary>Answer to <c>GET /ps/topics/{id}/presence</c> for a caller that may see the occupancy only (Jwt mode, <c>subscribe</c> without <c>presence</c>).</summary>
internal sealed record PresenceOccupancy(long TopicId, int Occupancy);

/// <summary>One page of <c>GET /ps/topics</c>; <see cref="Next"/> is the next page's URL when more may follow.</summary>
internal sealed record TopicPage(IReadOnlyList<TopicResource> Topics, [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Next);

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(CreatedTopic))]
[JsonSerializable(typeof(PublishedMessage))]
[JsonSerializable(typeof(PublishedMessages))]
[JsonSerializable(typeof(RefusedTopic[]))]
[JsonSerializable(typeof(Dictionary<string, string[]>))]
[JsonSerializable(typeof(TopicResource))]
[JsonSerializable(typeof(TopicPage))]
[JsonSerializable(typeof(PresenceResource))]
[JsonSerializable(typeof(PresenceOccupancy))]
internal sealed partial class LaharsubJsonContext : JsonSerializerContext;
