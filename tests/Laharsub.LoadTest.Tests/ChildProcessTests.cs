using System.Collections.Concurrent;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.Testing;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// What the helper processes (the server, nginx, redis-server; HostProcess and RedisServer in the tests)
/// share: a failure at start says why and what to do, and a stop leaves nothing running.
/// </summary>
public sealed class ChildProcessTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task AProcessThatExitsAtStartIsReportedWithTheLastLinesItWrote()
    {
        var lines = new ConcurrentQueue<string>();
        void Log(string line)
        {
            lines.Enqueue(line);
            if (line == "starting")
            {
                // A slow log (a console, a loaded machine) holds the last line behind the exit: the report must wait for it.
                Thread.Sleep(500);
            }
        }
        using var child = ChildProcess.Start("The server", "sh", ["-c", "echo starting; echo 'bind: address already in use'; exit 3"], Log);

        var exception = await Assert.ThrowsAsync<InvalidOperationException>(() => child.WaitUntilHealthyAsync(
            new Uri($"http://127.0.0.1:{ChildProcess.FreeLoopbackPort()}/"), Timeout, () => ":\n" + string.Join('\n', lines), CancellationToken.None)).WaitAsync(Timeout);

        Assert.StartsWith("The server exited at start with code 3:", exception.Message);
        Assert.Contains("bind: address already in use", exception.Message);
    }

    [Fact]
    public void AProgramThatCannotBeStartedIsReportedWithWhatToDo()
    {
        var exception = Assert.Throws<InvalidOperationException>(() => ChildProcess.Start(
            "redis-server", "laharsub-no-such-program", [], _ => { }, installHint: "install it with 'apt-get install -y laharsub-no-such-program'"));

        Assert.StartsWith("laharsub-no-such-program could not be started (", exception.Message);
        Assert.EndsWith("): install it with 'apt-get install -y laharsub-no-such-program'.", exception.Message);
    }

    [Fact]
    public async Task StoppingKillsAProcessThatIgnoresSigtermAndItsChildren()
    {
        var childPid = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        using var parent = ChildProcess.Start("sh", "sh", ["-c", "trap '' TERM; sleep 60 & echo $!; wait"], line => childPid.TrySetResult(int.Parse(line)));
        var sleeper = await childPid.Task.WaitAsync(Timeout);

        Assert.False(await parent.TerminateAsync(TimeSpan.FromSeconds(1)).WaitAsync(Timeout), "sh ignores SIGTERM, so it must still run");
        await parent.StopAsync(TimeSpan.FromSeconds(1)).WaitAsync(Timeout);

        Assert.True(parent.HasExited);
        await Eventually.HoldsAsync(() => Task.FromResult(HasEnded(sleeper)), Timeout, $"sh's child {sleeper} has ended too");
    }

    private static bool HasEnded(int pid)
    {
        // A killed orphan may stay a zombie until its new parent reaps it: it runs no more.
        var stat = $"/proc/{pid}/stat";
        try
        {
            var text = File.ReadAllText(stat);
            return text[(text.LastIndexOf(')') + 2)..].StartsWith('Z');
        }
        catch (Exception exception) when (exception is FileNotFoundException or DirectoryNotFoundException)
        {
            return true;
        }
    }
}
