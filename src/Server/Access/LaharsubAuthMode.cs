namespace Laharsub.Server;

/// <summary>Whether Laharsub checks who calls it (<c>Laharsub:Auth:Mode</c>).</summary>
public enum LaharsubAuthMode
{
    /// <summary>Anyone who can reach the server may do anything (the default, for development and trusted networks).</summary>
    Open,

    /// <summary>Requests carry JWT bearer tokens whose <c>laharsub</c> claim grants operations on topics; see docs/access-control.md.</summary>
    Jwt,

    /// <summary>
    /// The application that embeds Laharsub decides, with ASP.NET Core's authorization: its authentication finds the
    /// user, and its <c>AuthorizationHandler&lt;LaharsubRequirement, LaharsubTopic&gt;</c> allows or denies each operation on
    /// each topic, on every transport (<see cref="LaharsubRequirement"/>). The fast path leaves every request to the
    /// application's pipeline. docs/access-control.md, "Your app's own users".
    /// </summary>
    Host,

    /// <summary>
    /// The application's HTTP endpoint decides (<see cref="LaharsubAuthOptions.Backend"/>), for teams whose application
    /// is not .NET: Laharsub posts the operation and the topic with the caller's <c>Authorization</c> and <c>Cookie</c>
    /// headers, and the answer allows or denies; no answer in time denies. The fast path leaves every request to the
    /// pipeline. docs/access-control.md, "A backend decides".
    /// </summary>
    Backend,
}
