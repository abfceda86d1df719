using System.Diagnostics;

namespace Laharsub.Testing;

/// <summary>Runs Debian's redis-cli, bounded by a timeout, for what the tests set up (a cluster, a failover check).</summary>
public static class RedisCli
{
    /// <summary>The command's standard output; throws, with its output, when it fails, cannot start, or outlasts <paramref name="timeout"/>.</summary>
    public static async Task<string> RunAsync(TimeSpan timeout, params string[] arguments)
    {
        var start = new ProcessStartInfo("redis-cli") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new InvalidOperationException("redis-cli could not be started.");
        }
        catch (System.ComponentModel.Win32Exception exception)
        {
            throw new InvalidOperationException($"redis-cli could not be started ({exception.Message}): {RedisServer.InstallHint}.", exception);
        }
        using (process)
        {
            var output = process.StandardOutput.ReadToEndAsync();
            var error = process.StandardError.ReadToEndAsync();
            using var cancel = new CancellationTokenSource(timeout);
            try
            {
                await process.WaitForExitAsync(cancel.Token).ConfigureAwait(false);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                throw new TimeoutException($"redis-cli {string.Join(' ', arguments)} did not end within {timeout}.");
            }
            var text = await output.ConfigureAwait(false);
            if (process.ExitCode != 0)
            {
                throw new InvalidOperationException($"redis-cli {string.Join(' ', arguments)} failed ({process.ExitCode}): {text} {await error.ConfigureAwait(false)}");
            }
            return text;
        }
    }
}
