namespace Laharsub.Server.Access;

/// <summary>Whether Laharsub checks who calls it (<c>Laharsub:Auth:Mode</c>).</summary>
public enum LaharsubAuthMode
{
    /// <summary>Anyone who can reach the server may do anything (the default, for development and trusted networks).</summary>
    Open,

    /// <summary>Requests carry JWT bearer tokens whose <c>laharsub</c> claim grants operations on topics; see docs/access-control.md.</summary>
    Jwt,
}
