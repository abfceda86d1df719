using System.Text.Json;
using System.Text.Json.Serialization;
using Laharsub.Server.Storage;

namespace Laharsub.Server.Hosting;

/// <summary>Answer to <c>POST /ps/topics</c>.</summary>
internal sealed record CreatedTopic(long TopicId, string Epoch, [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Label = null);

/// <summary>Answer to a publish.</summary>
internal sealed record PublishedMessage(long TopicId, long MessageId, string Epoch);

/// <summary>One page of <c>GET /ps/topics</c>; <see cref="Next"/> is the next page's URL when more may follow.</summary>
internal sealed record TopicPage(IReadOnlyList<TopicInfo> Topics, [property: JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)] string? Next);

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(CreatedTopic))]
[JsonSerializable(typeof(PublishedMessage))]
[JsonSerializable(typeof(TopicInfo))]
[JsonSerializable(typeof(TopicPage))]
internal sealed partial class LaharsubJsonContext : JsonSerializerContext;
