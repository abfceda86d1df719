using System.Net;
using System.Net.Sockets;
using Laharsub.Testing;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// A server that cannot start for a reason its operator fixes says what to do and exits with 1; before,
/// the exception went unhandled: a stack trace, SIGABRT (exit 134) and a core dump.
/// </summary>
public sealed class StartFailureTests
{
    [Fact]
    public async Task AnAddressInUseEndsTheProcessSayingWhatToDo()
    {
        var taken = new TcpListener(IPAddress.Loopback, 0);
        taken.Start();
        try
        {
            var port = ((IPEndPoint)taken.LocalEndpoint).Port;

            var run = await HostProcess.RunCommandAsync(["--urls", $"http://127.0.0.1:{port}", "--Laharsub:Demo:Enabled=false"]);

            Assert.Equal(1, run.ExitCode);
            Assert.Contains($"127.0.0.1:{port}: address already in use", run.Error, StringComparison.Ordinal);
            Assert.Contains("--urls http://localhost:5001", run.Error, StringComparison.Ordinal);
            Assert.DoesNotContain("Unhandled exception", run.Error, StringComparison.Ordinal);
        }
        finally
        {
            taken.Stop();
        }
    }

    [Fact]
    public async Task AnInvalidSettingEndsTheProcessNamingIt()
    {
        var run = await HostProcess.RunCommandAsync(["--urls", "http://127.0.0.1:0", "--Laharsub:DefaultPollTimeout=00:05:00", "--Laharsub:Demo:Enabled=false"]);

        Assert.Equal(1, run.ExitCode);
        Assert.Contains("The server did not start: Laharsub:DefaultPollTimeout (00:05:00) must not exceed Laharsub:MaxPollTimeout", run.Error, StringComparison.Ordinal);
        Assert.DoesNotContain("Unhandled exception", run.Error, StringComparison.Ordinal);
    }
}
