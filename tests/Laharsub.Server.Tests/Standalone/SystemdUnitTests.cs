using Laharsub.LoadTestClient.Hosting;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// deploy/laharsub.service: systemd accepts it, and it stops the server gracefully, as a user of its
/// own, with an open-file limit that leaves room for connections.
/// </summary>
public sealed class SystemdUnitTests : IDisposable
{
    /// <summary>Where the unit expects the published server (docs/deployment.md, "systemd").</summary>
    private const string InstallDirectory = "/opt/laharsub";

    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    private readonly string _work = Directory.CreateTempSubdirectory("laharsub-systemd-").FullName;

    public void Dispose() => Directory.Delete(_work, recursive: true);

    private static string UnitPath =>
        Path.Combine(ChildProcess.FindRepositoryRoot(AppContext.BaseDirectory) ?? throw new InvalidOperationException("Laharsub.sln not found"),
            "deploy/laharsub.service");

    /// <summary>
    /// verify checks that ExecStart= names an executable, and /opt/laharsub is empty on a test machine: the
    /// copy verified names the server's own executable as built for these tests instead, and nothing else
    /// changes. verify says "ignoring" about a key it does not know or a value it cannot parse and still
    /// exits 0, so anything it writes fails the test.
    /// </summary>
    [Fact]
    public async Task SystemdAnalyzeVerifyAcceptsTheUnitWithoutAWord()
    {
        var built = Path.GetDirectoryName(HostProcess.BuiltHostDll)!;
        Assert.True(File.Exists(Path.Combine(built, "Laharsub.Server.Host")), $"The server's executable is missing from {built}: build the solution first.");
        var copy = Path.Combine(_work, "laharsub.service");
        File.WriteAllText(copy, File.ReadAllText(UnitPath).Replace(InstallDirectory, built, StringComparison.Ordinal));

        var (exitCode, output) = await Command.RunAsync("systemd-analyze", ["verify", copy], Bound,
            "install Debian's systemd package (./test.sh does when systemd-analyze is missing)");

        Assert.True(exitCode == 0 && output.Length == 0, $"systemd-analyze verify {copy} (deploy/laharsub.service with {InstallDirectory} = {built}) exited {exitCode}:\n{output}");
    }

    [Fact]
    public void TheUnitStopsGracefullyAsAUserOfItsOwnWithRoomForConnections()
    {
        var settings = File.ReadLines(UnitPath)
            .Where(line => line.Contains('=', StringComparison.Ordinal) && !line.TrimStart().StartsWith('#'))
            .Select(line => line.Split('=', 2))
            .ToLookup(pair => pair[0].Trim(), pair => pair[1].Trim());

        Assert.Equal($"{InstallDirectory}/Laharsub.Server.Host", Assert.Single(settings["ExecStart"]));
        Assert.Equal("SIGTERM", Assert.Single(settings["KillSignal"]));
        var stopTimeout = TimeSpan.FromSeconds(int.Parse(Assert.Single(settings["TimeoutStopSec"]), System.Globalization.CultureInfo.InvariantCulture));
        Assert.True(stopTimeout > StandaloneHost.ShutdownTimeout,
            $"TimeoutStopSec ({stopTimeout}) must exceed the server's own shutdown drain ({StandaloneHost.ShutdownTimeout}), or systemd kills it mid-drain.");
        Assert.Equal("on-failure", Assert.Single(settings["Restart"]));
        Assert.Equal("yes", Assert.Single(settings["DynamicUser"]));
        Assert.InRange(int.Parse(Assert.Single(settings["LimitNOFILE"]), System.Globalization.CultureInfo.InvariantCulture), 20_000, int.MaxValue);
        Assert.Contains("ASPNETCORE_HTTP_PORTS=8080", settings["Environment"]);
    }
}
