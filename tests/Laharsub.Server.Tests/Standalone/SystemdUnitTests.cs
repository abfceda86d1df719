using System.Globalization;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// deploy/laharsub.service: systemd accepts it, rates its exposure as docs/deployment.md says, and it
/// stops the server gracefully, as a user of its own, with an open-file limit that leaves room for
/// connections; the server tells systemd when it is ready and when it stops (Type=notify), and starts
/// with a fresh HOME without making data-protection keys.
/// </summary>
public sealed partial class SystemdUnitTests : IDisposable
{
    /// <summary>Where the unit expects the published server (docs/deployment.md, "systemd").</summary>
    private const string InstallDirectory = "/opt/laharsub";

    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    private readonly string _work = Directory.CreateTempSubdirectory("laharsub-systemd-").FullName;

    public void Dispose() => Directory.Delete(_work, recursive: true);

    private static string RepositoryRoot =>
        ChildProcess.FindRepositoryRoot(AppContext.BaseDirectory) ?? throw new InvalidOperationException("Laharsub.sln not found");

    private static string UnitPath => Path.Combine(RepositoryRoot, "deploy/laharsub.service");

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

    /// <summary>
    /// systemd-analyze security rates the unit's sandboxing from 0 (locked down) to 10 (exposed): the unit
    /// stays in the "OK" range, and docs/deployment.md states the rating this systemd gives it.
    /// </summary>
    [Fact]
    public async Task SystemdAnalyzeSecurityRatesTheUnitAsTheDeploymentGuideSays()
    {
        var copy = Path.Combine(_work, "laharsub.service");
        File.Copy(UnitPath, copy);

        var (exitCode, output) = await Command.RunAsync("systemd-analyze", ["security", "--offline=true", "--no-pager", copy], Bound,
            "install Debian's systemd package (./test.sh does when systemd-analyze is missing)");

        var rating = ExposurePattern().Match(output);
        Assert.True(exitCode == 0 && rating.Success, $"systemd-analyze security --offline=true {copy} exited {exitCode}:\n{output}");
        var exposure = double.Parse(rating.Groups[1].Value, CultureInfo.InvariantCulture);
        Assert.True(exposure <= 2.0, $"The unit's exposure is {rating.Value}; the hardening of docs/deployment.md gives at most 2.0:\n{output}");
        var guide = File.ReadAllText(Path.Combine(RepositoryRoot, "docs/deployment.md"));
        Assert.Contains($"`systemd-analyze security` rates it {rating.Groups[1].Value} {rating.Groups[2].Value}", guide, StringComparison.Ordinal);
    }

    /// <summary>
    /// Type=notify: the server sends READY=1 to the socket in NOTIFY_SOCKET once it serves, and STOPPING=1
    /// when SIGTERM begins its stop, and writes its logs with the journal's priority prefixes. systemd is
    /// not PID 1 here, so its part is played by the test: a socket of its own, and a parent process named
    /// systemd (what Microsoft.Extensions.Hosting.Systemd checks before it speaks the protocol).
    /// </summary>
    [Fact]
    public async Task TheServerTellsItsServiceManagerWhenItIsReadyAndWhenItStops()
    {
        var notifications = Path.Combine(_work, "notify");
        using var socket = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
        socket.Bind(new UnixDomainSocketEndPoint(notifications));
        var manager = Path.Combine(_work, "systemd");
        File.Copy("/bin/bash", manager);
        var port = ChildProcess.FreeLoopbackPort();
        // The server runs as this "systemd"'s child, which passes SIGTERM on and waits for it to exit.
        string[] command = [manager, "-c", "\"$@\" & child=$!; trap 'kill -TERM $child' TERM; wait $child; wait $child", "systemd",
            "dotnet", HostProcess.BuiltHostDll, "--urls", $"http://127.0.0.1:{port}", "--Laharsub:Demo:Enabled=false"];

        await using var server = await HostProcess.StartCommandAsync(command, new Uri($"http://127.0.0.1:{port}/"),
            new Dictionary<string, string?> { ["NOTIFY_SOCKET"] = notifications });
        var ready = await ReceiveAsync(socket);
        await server.StopAsync();
        var stopping = await ReceiveAsync(socket);

        Assert.Contains("READY=1", ready, StringComparison.Ordinal);
        Assert.Contains("STOPPING=1", stopping, StringComparison.Ordinal);
        // <4> is the journal's warning priority: the Open mode warning, in the systemd console format.
        Assert.Contains("<4>Laharsub.Server.LaharsubAccess", server.Output, StringComparison.Ordinal);
    }

    /// <summary>
    /// A service's HOME may be empty or not writable (DynamicUser, ProtectSystem=strict): the server starts
    /// without making data-protection keys there, and without the warning that such a key is unencrypted.
    /// </summary>
    [Fact]
    public async Task TheServerStartsWithAFreshHomeWithoutMakingDataProtectionKeys()
    {
        var home = Directory.CreateDirectory(Path.Combine(_work, "home")).FullName;
        var port = ChildProcess.FreeLoopbackPort();

        await using (var server = await HostProcess.StartCommandAsync(["dotnet", HostProcess.BuiltHostDll, "--urls", $"http://127.0.0.1:{port}", "--Laharsub:Demo:Enabled=false"],
            new Uri($"http://127.0.0.1:{port}/"), new Dictionary<string, string?> { ["HOME"] = home }))
        {
            // Started: every hosted service, the key ring's loader among them by default, has run its start.
            await server.WaitForOutputAsync(new Regex("Application started", RegexOptions.None, TimeSpan.FromSeconds(1)), Bound);

            Assert.DoesNotContain("DataProtection", server.Output, StringComparison.Ordinal);
        }
        Assert.Empty(Directory.EnumerateFileSystemEntries(home, "*", SearchOption.AllDirectories));
    }

    private static async Task<string> ReceiveAsync(Socket socket)
    {
        var buffer = new byte[4096];
        var received = await socket.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Bound);
        return Encoding.UTF8.GetString(buffer, 0, received);
    }

    [GeneratedRegex(@"Overall exposure level for laharsub\.service: ([0-9]+\.[0-9]) ([A-Z]+)")]
    private static partial Regex ExposurePattern();

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
        Assert.Equal("notify", Assert.Single(settings["Type"]));
        Assert.InRange(int.Parse(Assert.Single(settings["LimitNOFILE"]), System.Globalization.CultureInfo.InvariantCulture), 20_000, int.MaxValue);
        Assert.Contains("ASPNETCORE_HTTP_PORTS=8080", settings["Environment"]);
    }
}
