namespace Laharsub.Server;

/// <summary>
/// What a request does to topics: as a <c>laharsub</c> claim or <c>Laharsub:Auth:Anonymous</c> names it (Jwt mode), and as
/// <see cref="LaharsubRequirement"/> asks the application's authorization (Host mode).
/// </summary>
public enum LaharsubOperation
{
    /// <summary>Creating a topic (with the label it asks for).</summary>
    Create,

    /// <summary>Publishing to a topic: REST, to several topics at once, or a WebSocket's <c>publish</c> frame.</summary>
    Publish,

    /// <summary>Subscribing to a topic (a poll, an event stream, a WebSocket or its <c>subscribe</c> frame), and reading its description.</summary>
    Subscribe,

    /// <summary>Seeing a topic in the listing of topics, and reading its description.</summary>
    List,

    /// <summary>Deleting a topic.</summary>
    Delete,

    /// <summary>Seeing who is present on a topic with presence, with their data, and subscribing to its companion topic of presence events.</summary>
    Presence,

    /// <summary>Reading the standalone server's admin page data; not a topic permission, so granted for all or nothing.</summary>
    Admin,
}

internal static class LaharsubOperations
{
    public static readonly LaharsubOperation[] All = Enum.GetValues<LaharsubOperation>();

    /// <summary>The name used in claims, configuration and problem details.</summary>
    public static string Name(this LaharsubOperation operation) => operation switch
    {
        LaharsubOperation.Create => "create",
        LaharsubOperation.Publish => "publish",
        LaharsubOperation.Subscribe => "subscribe",
        LaharsubOperation.List => "list",
        LaharsubOperation.Delete => "delete",
        LaharsubOperation.Presence => "presence",
        _ => "admin",
    };

    public static bool TryParse(ReadOnlySpan<char> name, out LaharsubOperation operation)
    {
        foreach (var candidate in All)
        {
            if (name.Equals(candidate.Name(), StringComparison.Ordinal))
            {
                operation = candidate;
                return true;
            }
        }
        operation = default;
        return false;
    }
}
