using Microsoft.AspNetCore.Authorization;

namespace Laharsub.Server;

/// <summary>
/// In Host mode (<see cref="LaharsubAuthMode.Host"/>), what Laharsub asks the application's authorization
/// (<see cref="IAuthorizationService"/>) before each operation, with the topic as the resource: an application
/// decides in an ordinary <c>AuthorizationHandler&lt;LaharsubRequirement, LaharsubTopic&gt;</c>, from the user its own
/// authentication found (cookies, JWT bearer, OpenID Connect). docs/access-control.md, "Your app's own users".
/// </summary>
public sealed class LaharsubRequirement : IAuthorizationRequirement
{
    private static readonly LaharsubRequirement[] ByOperation = [.. LaharsubOperations.All.Select(operation => new LaharsubRequirement(operation))];

    private LaharsubRequirement(LaharsubOperation operation) => Operation = operation;

    /// <summary>What the caller asks to do.</summary>
    public LaharsubOperation Operation { get; }

    /// <summary>The requirement of <paramref name="operation"/> (one instance per operation).</summary>
    public static LaharsubRequirement For(LaharsubOperation operation) => ByOperation[(int)operation];

    /// <inheritdoc/>
    public override string ToString() => $"Laharsub {Operation.Name()}";
}
