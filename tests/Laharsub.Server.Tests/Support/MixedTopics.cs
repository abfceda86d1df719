namespace Laharsub.Server.Tests.Support;

/// <summary>
/// The targets of a publish to several topics in the mixed cases, from a shape such as <c>ok,stale,missing</c>:
/// a topic that exists, one named with an epoch it does not have, one that does not exist.
/// </summary>
/// <param name="Topics">The targets in the syntax of <c>topics</c>, in the shape's order.</param>
/// <param name="Roles">Each topic id's role in the shape.</param>
/// <param name="Existing">The topics that exist, in the shape's order.</param>
public sealed record MixedTopics(string Topics, IReadOnlyDictionary<long, string> Roles, IReadOnlyList<long> Existing)
{
    public static async Task<MixedTopics> CreateAsync(HttpClient client, string shape)
    {
        var items = new List<string>();
        var roles = new Dictionary<long, string>();
        var existing = new List<long>();
        var missingId = 900_000L;
        foreach (var role in shape.Split(','))
        {
            var id = role == "missing" ? ++missingId : await client.CreateTopicAsync();
            roles[id] = role;
            if (role != "missing")
            {
                existing.Add(id);
            }
            items.Add(role == "stale" ? $"{id}~0000000000000000" : $"{id}");
        }
        return new MixedTopics(string.Join(",", items), roles, existing);
    }

    /// <summary>A refusal's <c>topics</c> extension as <c>role:reason</c> pairs.</summary>
    public string Named(System.Text.Json.JsonElement problem) => string.Join(",", problem.GetProperty("topics").EnumerateArray()
        .Select(t => $"{Roles[t.GetProperty("topicId").GetInt64()]}:{t.GetProperty("reason").GetString()}"));
}
