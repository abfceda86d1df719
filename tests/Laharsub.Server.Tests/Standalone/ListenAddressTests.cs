using System.Diagnostics;
using System.Globalization;
using System.Text.RegularExpressions;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// The standalone server listens where ASP.NET Core's usual settings say: <c>--urls</c>,
/// <c>ASPNETCORE_URLS</c>, <c>ASPNETCORE_HTTP_PORTS</c> (what the official container images set) and
/// <c>Kestrel:Endpoints</c>; with none of them, on <c>http://localhost:5000</c>. Each test starts the
/// built server as a process and asks it for /health at the address it was given.
/// </summary>
public sealed partial class ListenAddressTests
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    private static string[] Server(params string[] arguments) => ["dotnet", HostProcess.BuiltHostDll, "--Laharsub:Demo:Enabled=false", .. arguments];

    [Fact]
    public async Task TheUrlsArgumentChoosesTheAddress()
    {
        var port = ChildProcess.FreeLoopbackPort();

        await using var server = await HostProcess.StartCommandAsync(Server("--urls", $"http://127.0.0.1:{port}"), new Uri($"http://127.0.0.1:{port}/"));

        Assert.Contains($"Now listening on: http://127.0.0.1:{port}", server.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AspNetCoreUrlsChoosesTheAddress()
    {
        var port = ChildProcess.FreeLoopbackPort();

        await using var server = await HostProcess.StartCommandAsync(Server(), new Uri($"http://127.0.0.1:{port}/"),
            new Dictionary<string, string?> { ["ASPNETCORE_URLS"] = $"http://127.0.0.1:{port}" });

        Assert.Contains($"Now listening on: http://127.0.0.1:{port}", server.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AspNetCoreHttpPortsChoosesThePortOnEveryInterface()
    {
        var port = ChildProcess.FreeLoopbackPort();

        await using var server = await HostProcess.StartCommandAsync(Server(), new Uri($"http://127.0.0.1:{port}/"),
            new Dictionary<string, string?> { ["ASPNETCORE_HTTP_PORTS"] = port.ToString(CultureInfo.InvariantCulture) });

        // ASP.NET Core's own form of "every interface" for HTTP_PORTS, as in the official container image.
        Assert.Contains($"Now listening on: http://[::]:{port}", server.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task KestrelEndpointsChooseTheAddressWithoutAWarningAboutOverriddenUrls()
    {
        var port = ChildProcess.FreeLoopbackPort();

        await using var server = await HostProcess.StartCommandAsync(Server(), new Uri($"http://127.0.0.1:{port}/"),
            new Dictionary<string, string?> { ["Kestrel__Endpoints__Http__Url"] = $"http://127.0.0.1:{port}" });

        Assert.Contains($"Now listening on: http://127.0.0.1:{port}", server.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("Overriding", server.Output, StringComparison.Ordinal);
    }

    /// <summary>
    /// Port 5000 of this machine may be anyone's, so the server runs in a network namespace of its own
    /// (<c>unshare</c>, an unprivileged user namespace) and is asked from inside it (<c>nsenter</c> and curl).
    /// </summary>
    [Fact]
    public async Task WithNoAddressConfiguredItListensOnLocalhost5000()
    {
        string[] privateNetwork = ["unshare", "--user", "--map-root-user", "--net", "bash", "-c", "ip link set lo up && exec \"$@\"", "bash"];

        await using var server = await HostProcess.StartCommandAsync([.. privateNetwork, .. Server()], baseAddress: null);
        await WaitForListeningAsync(server);

        Assert.Contains("Now listening on: http://localhost:5000", server.Output, StringComparison.Ordinal);
        var (exitCode, answer) = await Command.RunAsync("nsenter", ["--target", server.ProcessId.ToString(CultureInfo.InvariantCulture), "--user", "--net",
            "--preserve-credentials", "curl", "--silent", "--show-error", "--max-time", "10", "--write-out", "%{http_code}", "--output", "/dev/null",
            "http://localhost:5000/health"], Bound, "nsenter is in util-linux");
        Assert.True(exitCode == 0 && answer.Trim() == "200", $"GET http://localhost:5000/health inside the server's namespace: exit {exitCode}, {answer}");
    }

    private static async Task WaitForListeningAsync(HostProcess server)
    {
        var deadline = Stopwatch.StartNew();
        while (!ListeningLine().IsMatch(server.Output))
        {
            Assert.False(server.HasExited, $"The server (in a private network namespace: unshare and ip from util-linux and iproute2) exited at start:\n{server.Output}");
            Assert.True(deadline.Elapsed < Bound, $"The server did not say where it listens within {Bound}:\n{server.Output}");
            // Re-checks output that arrives on another thread; not a race to win.
            await Task.Delay(20);
        }
    }

    [GeneratedRegex("Now listening on: ")]
    private static partial Regex ListeningLine();
}
