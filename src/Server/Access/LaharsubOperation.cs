namespace Laharsub.Server.Access;

/// <summary>What a request does, as a <c>laharsub</c> claim or <c>Laharsub:Auth:Anonymous</c> names it.</summary>
internal enum LaharsubOperation
{
    Create,
    Publish,
    Subscribe,
    List,
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
