using Laharsub.LoadTestClient.Load;

namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// A .NET server of this repository that the tool builds and starts for a run (<see cref="ServerProcess"/>):
/// Laharsub's standalone host, or the floor (loadtest/Floor), which speaks the same wire.
/// </summary>
/// <param name="Name">How the log and messages name it.</param>
/// <param name="Directory">The project's directory, relative to the repository root.</param>
/// <param name="AssemblyName">Its dll's name, without the extension.</param>
/// <param name="Arguments">Settings every run of it needs.</param>
internal sealed record ServerProject(string Name, string Directory, string AssemblyName, IReadOnlyList<string> Arguments)
{
    public static ServerProject Laharsub { get; } = new("server", ChildProcess.HostDirectory, ChildProcess.HostAssemblyName,
    [
        // Thousands of simulated clients share one address: the per-client caps, meant for one real
        // client, would refuse them.
        "--Laharsub:Limits:MaxConnectionsPerClient=0",
        "--Laharsub:Limits:MaxWaitingPollsPerClient=0",
    ]);

    /// <summary>The floor has no settings: no limits, a fixed ring per topic.</summary>
    public static ServerProject Floor { get; } = new("floor", "loadtest/Floor", "Laharsub.Floor", []);

    /// <summary>The project that serves <paramref name="target"/>, or null for a server that is not built here (nchan).</summary>
    public static ServerProject? Of(TargetKind target) => target switch
    {
        TargetKind.Laharsub => Laharsub,
        TargetKind.Floor => Floor,
        _ => null,
    };

    public string ReleaseDll(string repositoryRoot) => ChildProcess.ProjectDll(repositoryRoot, Directory, AssemblyName, "Release");
}
