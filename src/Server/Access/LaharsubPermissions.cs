using System.Text;
using System.Text.Json;

namespace Laharsub.Server.Access;

/// <summary>
/// What a caller may do: for each operation, the topic patterns it applies to. Parsed once per token
/// (from its <c>laharsub</c> claim) and once for anonymous callers (from <c>Laharsub:Auth:Anonymous</c>).
/// </summary>
internal sealed class LaharsubPermissions
{
    public const string ClaimType = "laharsub";

    private readonly TopicPattern[][] _patterns;

    private LaharsubPermissions(TopicPattern[][] patterns) => _patterns = patterns;

    public static readonly LaharsubPermissions None = new([.. LaharsubOperations.All.Select(_ => Array.Empty<TopicPattern>())]);

    public IReadOnlyList<TopicPattern> For(LaharsubOperation operation) => _patterns[(int)operation];

    public bool AllowsNothing(LaharsubOperation operation) => _patterns[(int)operation].Length == 0;

    public bool AllowsEveryTopic(LaharsubOperation operation)
    {
        foreach (var pattern in _patterns[(int)operation])
        {
            if (pattern.IsAll)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Whether an id pattern (or <c>*</c>) grants <paramref name="operation"/> on the topic, so its label need not be looked up.</summary>
    public bool AllowsById(LaharsubOperation operation, long topicId)
    {
        foreach (var pattern in _patterns[(int)operation])
        {
            if (pattern.IsAll || pattern.MatchesId(topicId))
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Whether a label pattern (or <c>*</c>) grants <paramref name="operation"/> on a topic labelled <paramref name="label"/>.</summary>
    public bool AllowsLabel(LaharsubOperation operation, string? label)
    {
        foreach (var pattern in _patterns[(int)operation])
        {
            if (pattern.MatchesLabel(label))
            {
                return true;
            }
        }
        return false;
    }

    public bool HasLabelPatterns(LaharsubOperation operation)
    {
        foreach (var pattern in _patterns[(int)operation])
        {
            if (pattern.Label is not null)
            {
                return true;
            }
        }
        return false;
    }

    public bool Allows(LaharsubOperation operation, long topicId, string? label) =>
        AllowsById(operation, topicId) || AllowsLabel(operation, label);

    /// <summary>Everything either may do: a token never grants less than anonymous callers get.</summary>
    public LaharsubPermissions Union(LaharsubPermissions other)
    {
        if (ReferenceEquals(other, None) || ReferenceEquals(this, other))
        {
            return this;
        }
        if (ReferenceEquals(this, None))
        {
            return other;
        }
        return new([.. _patterns.Zip(other._patterns, (mine, theirs) => mine.Concat(theirs).ToArray())]);
    }

    /// <summary>The grants of one operation, for problem details: <c>orders-*, 14</c>, or <c>nothing</c>.</summary>
    public string Describe(LaharsubOperation operation) =>
        _patterns[(int)operation] is { Length: > 0 } patterns ? string.Join(", ", patterns.Select(p => p.Text)) : "nothing";

    /// <summary>
    /// Parses a <c>laharsub</c> claim: a JSON object (or a string holding one, for issuers that emit only
    /// string claims) whose members are operations, each <c>true</c> (every topic), <c>false</c>, or an array
    /// of patterns. On failure <paramref name="error"/> says what is wrong.
    /// </summary>
    public static bool TryParseClaim(string json, out LaharsubPermissions permissions, out string? error)
    {
        permissions = None;
        var lists = LaharsubOperations.All.Select(_ => new List<TopicPattern>()).ToArray();
        try
        {
            using var document = JsonDocument.Parse(json);
            var root = document.RootElement;
            if (root.ValueKind == JsonValueKind.String)
            {
                return TryParseClaim(root.GetString()!, out permissions, out error);
            }
            if (root.ValueKind != JsonValueKind.Object)
            {
                error = $"the {ClaimType} claim is not a JSON object such as {{\"subscribe\":[\"*\"],\"publish\":[\"orders-*\"]}}";
                return false;
            }
            foreach (var member in root.EnumerateObject())
            {
                if (!LaharsubOperations.TryParse(member.Name, out var operation))
                {
                    error = $"'{member.Name}' in the {ClaimType} claim is not an operation: use create, publish, subscribe, list, delete or admin";
                    return false;
                }
                if (!TryAddPatterns(member.Value, operation, lists[(int)operation], out error))
                {
                    return false;
                }
            }
        }
        catch (JsonException exception)
        {
            error = $"the {ClaimType} claim is not valid JSON ({exception.Message})";
            return false;
        }
        permissions = new([.. lists.Select(list => list.ToArray())]);
        error = null;
        return true;
    }

    private static bool TryAddPatterns(JsonElement value, LaharsubOperation operation, List<TopicPattern> patterns, out string? error)
    {
        error = null;
        switch (value.ValueKind)
        {
            case JsonValueKind.True:
                patterns.Add(TopicPattern.All);
                return true;
            case JsonValueKind.False:
            case JsonValueKind.Null:
                return true;
            case JsonValueKind.String:
                return TryAdd(value.GetString()!, operation, patterns, out error);
            case JsonValueKind.Array:
                foreach (var item in value.EnumerateArray())
                {
                    var text = item.ValueKind switch
                    {
                        JsonValueKind.String => item.GetString(),
                        JsonValueKind.Number => item.GetRawText(),
                        _ => null,
                    };
                    if (text is null || !TryAdd(text, operation, patterns, out error))
                    {
                        error ??= $"{ClaimType}.{operation.Name()} holds {item.GetRawText()}: use pattern strings such as \"*\", \"14\", \"10-20\" or \"orders-*\"";
                        return false;
                    }
                }
                return true;
            default:
                error = $"{ClaimType}.{operation.Name()} is {value.ValueKind}: use true, false or an array of patterns such as [\"orders-*\", \"14\"]";
                return false;
        }
    }

    private static bool TryAdd(string text, LaharsubOperation operation, List<TopicPattern> patterns, out string? error)
    {
        if (!TopicPattern.TryParse(text, out var pattern, out error))
        {
            error = $"{ClaimType}.{operation.Name()}: {error}";
            return false;
        }
        if (operation == LaharsubOperation.Create && !pattern.IsAll && pattern.Label is null)
        {
            // A topic's id is assigned when it is created, so only its label can be granted beforehand.
            error = $"{ClaimType}.create holds '{text}', a topic id: creation is granted by label pattern (orders-*) or * only";
            return false;
        }
        if (operation == LaharsubOperation.Admin && !pattern.IsAll)
        {
            error = $"{ClaimType}.admin holds '{text}': admin is no topic permission, so it is granted with true or * only";
            return false;
        }
        patterns.Add(pattern);
        return true;
    }

    /// <summary>Parses <c>Laharsub:Auth:Anonymous</c>: <c>subscribe,list</c> or <c>subscribe:news-*,publish:42</c>.</summary>
    public static bool TryParseAnonymous(string? setting, out LaharsubPermissions permissions, out string? error)
    {
        permissions = None;
        error = null;
        if (string.IsNullOrWhiteSpace(setting))
        {
            return true;
        }
        var lists = LaharsubOperations.All.Select(_ => new List<TopicPattern>()).ToArray();
        foreach (var item in setting.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            var colon = item.IndexOf(':');
            var name = colon < 0 ? item : item[..colon];
            if (!LaharsubOperations.TryParse(name, out var operation))
            {
                error = $"Laharsub:Auth:Anonymous contains '{item}': '{name}' is not an operation. Use a comma-separated list of create, publish, subscribe, list, delete and admin, each optionally followed by :pattern (subscribe:news-*).";
                return false;
            }
            if (!TryAdd(colon < 0 ? "*" : item[(colon + 1)..], operation, lists[(int)operation], out var patternError))
            {
                error = $"Laharsub:Auth:Anonymous contains '{item}': {patternError}.";
                return false;
            }
        }
        permissions = new([.. lists.Select(list => list.ToArray())]);
        return true;
    }

    public override string ToString()
    {
        var text = new StringBuilder();
        foreach (var operation in LaharsubOperations.All)
        {
            if (!AllowsNothing(operation))
            {
                text.Append(text.Length == 0 ? "" : "; ").Append(operation.Name()).Append(": ").Append(Describe(operation));
            }
        }
        return text.Length == 0 ? "nothing" : text.ToString();
    }
}
