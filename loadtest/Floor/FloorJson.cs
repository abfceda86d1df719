using System.Text.Json.Serialization;

namespace Laharsub.Floor;

/// <summary>The answer to <c>POST /ps/topics</c>.</summary>
internal sealed record TopicCreated(long TopicId, string Epoch);

/// <summary>The answer to a publish.</summary>
internal sealed record Published(long TopicId, long MessageId, string Epoch);

/// <summary>Source-generated JSON for the REST answers, as the slim builder's template has it.</summary>
[JsonSerializable(typeof(TopicCreated))]
[JsonSerializable(typeof(Published))]
internal sealed partial class FloorJson : JsonSerializerContext;
