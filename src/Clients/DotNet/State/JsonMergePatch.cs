using System.Text.Json.Nodes;

namespace Laharsub.Client;

/// <summary>
/// RFC 7396 JSON Merge Patch on System.Text.Json nodes: what a state topic's subscribers apply to the
/// document for each <c>application/merge-patch+json</c> message.
/// </summary>
public static class JsonMergePatch
{
    /// <summary>The media type of a merge patch.</summary>
    public const string MediaType = "application/merge-patch+json";

    /// <summary>
    /// Applies <paramref name="patch"/> to <paramref name="target"/> as RFC 7396 section 2 defines: an
    /// object patch sets each of its members in the target (a <see langword="null"/> member removes it,
    /// an object member is applied recursively), any other patch replaces the target.
    /// </summary>
    /// <param name="target">The document; an object is changed in place. <see langword="null"/> stands for JSON <c>null</c> or no document.</param>
    /// <param name="patch">The patch; it is not changed, and the result shares none of its nodes.</param>
    /// <returns>The patched document: <paramref name="target"/> itself when both are objects, else a new node.</returns>
    public static JsonNode? Apply(JsonNode? target, JsonNode? patch)
    {
        if (patch is not JsonObject members)
        {
            return patch?.DeepClone();
        }
        var result = target as JsonObject ?? [];
        foreach (var (name, value) in members)
        {
            if (value is null)
            {
                result.Remove(name);
            }
            else
            {
                var current = result.TryGetPropertyValue(name, out var existing) ? existing : null;
                var patched = Apply(current, value);
                // An object already in the result was patched in place; anything else takes the member's place.
                if (!ReferenceEquals(patched, current))
                {
                    result[name] = patched;
                }
            }
        }
        return result;
    }
}
