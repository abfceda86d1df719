using System.Diagnostics;

namespace Laharsub.Server.Tests.Support;

/// <summary>Runs a system command (systemd-analyze, nsenter) to its end, bounded, and returns what it wrote.</summary>
public static class Command
{
    /// <param name="installHint">What to do when <paramref name="fileName"/> cannot be started, e.g. the package that has it.</param>
    /// <exception cref="InvalidOperationException">It could not be started; the message says what to install.</exception>
    public static async Task<(int ExitCode, string Output)> RunAsync(string fileName, IEnumerable<string> arguments, TimeSpan timeout, string installHint)
    {
        var start = new ProcessStartInfo(fileName) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        Process process;
        try
        {
            process = Process.Start(start) ?? throw new InvalidOperationException($"{fileName} could not be started.");
        }
        catch (System.ComponentModel.Win32Exception missing)
        {
            throw new InvalidOperationException($"{fileName} could not be started ({missing.Message}): {installHint}.", missing);
        }
        using (process)
        {
            using var deadline = new CancellationTokenSource(timeout);
            var output = process.StandardOutput.ReadToEndAsync(deadline.Token);
            var error = process.StandardError.ReadToEndAsync(deadline.Token);
            try
            {
                await process.WaitForExitAsync(deadline.Token);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                throw new TimeoutException($"{fileName} {string.Join(' ', start.ArgumentList)} did not finish within {timeout}.");
            }
            return (process.ExitCode, (await output + await error).Trim());
        }
    }
}
