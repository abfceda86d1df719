using System.Text.Json;
using System.Text.Json.Serialization;

namespace Laharsub.Client.Wire;

/// <summary>Answer to <c>GET topics</c>; <see cref="Next"/> is present when more topics may follow.</summary>
internal sealed record TopicList(List<TopicInfo> Topics, string? Next);

/// <summary>The body of <c>POST topics</c> that names a label.</summary>
internal sealed record TopicDescription(string Label);

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
internal sealed partial class ClientJsonContext : JsonSerializerContext;
