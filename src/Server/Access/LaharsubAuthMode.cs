namespace Laharsub.Server.Access;

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
}
