using System.Text.Json;
using System.Text.Json.Serialization;

namespace Laharsub.Client.Wire;

/// <summary>Answer to <c>GET topics</c>; <see cref="Next"/> is present when more topics may follow.</summary>
internal sealed record TopicList(List<TopicInfo> Topics, string? Next);

/// <summary>The body of <c>POST topics</c> that names a label or asks for presence (absent fields are left out).</summary>
internal sealed record TopicDescription(
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Label,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] bool? Presence = null,
    [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] bool? State = null);

/// <summary>Answer to <c>GET topics/{id}/presence</c>; <see cref="Members"/> and <see cref="Next"/> are absent for a caller allowed the occupancy alone.</summary>
internal sealed record PresenceList(long TopicId, int Occupancy, List<PresenceMember>? Members, string? Next);

/// <summary>The answer to a publish to several topics.</summary>
internal sealed record PublishedMessages(List<PublishedMessage> Messages);

/// <summary>Source-generated metadata for the server's answers, so the client stays trimming and AOT safe.</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(CreatedTopic))]
[JsonSerializable(typeof(TopicDescription))]
[JsonSerializable(typeof(TopicList))]
[JsonSerializable(typeof(TopicInfo))]
[JsonSerializable(typeof(PublishedMessage))]
[JsonSerializable(typeof(PublishedMessages))]
[JsonSerializable(typeof(PresenceList))]
[JsonSerializable(typeof(System.Text.Json.Nodes.JsonObject))]
internal sealed partial class ClientJsonContext : JsonSerializerContext;
