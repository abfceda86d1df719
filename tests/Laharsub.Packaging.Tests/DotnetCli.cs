using System.Diagnostics;
using System.Text;

namespace Laharsub.Packaging.Tests;

/// <summary>Runs the <c>dotnet</c> command line as a child process, bounded in time, and fails with what it wrote.</summary>
internal static class DotnetCli
{
    /// <summary>
    /// Runs <c>dotnet <paramref name="arguments"/></c> in <paramref name="workingDirectory"/> and returns its
    /// output. Past <paramref name="timeout"/> the process and its children are killed; a timeout or a
    /// non-zero exit code throws with the command, the folder and everything the process wrote.
    /// </summary>
    public static async Task<string> RunAsync(string workingDirectory, TimeSpan timeout, IReadOnlyDictionary<string, string>? environment, params string[] arguments)
    {
        var (exitCode, output) = await RunToExitAsync(workingDirectory, timeout, environment, arguments);
        if (exitCode != 0)
        {
            throw new InvalidOperationException($"'dotnet {string.Join(' ', arguments)}' in {workingDirectory} exited with code {exitCode}. It wrote:\n{output}");
        }
        return output;
    }

    /// <summary>
    /// Runs <c>dotnet <paramref name="arguments"/></c> like <see cref="RunAsync"/>, but returns its exit code
    /// with its output instead of throwing when it is not 0 (for a command that is meant to fail); a timeout still throws.
    /// </summary>
    public static async Task<(int ExitCode, string Output)> RunToExitAsync(string workingDirectory, TimeSpan timeout, IReadOnlyDictionary<string, string>? environment,
        params string[] arguments)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = workingDirectory,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        // Under "dotnet test" the MSBuild variables of the outer build are inherited; a nested build must
        // find its own SDK and state, not the parent's.
        foreach (var name in start.Environment.Keys.Where(key => key.StartsWith("MSBuild", StringComparison.OrdinalIgnoreCase)).ToList())
        {
            start.Environment.Remove(name);
        }
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        start.Environment["DOTNET_SKIP_FIRST_TIME_EXPERIENCE"] = "1";
        foreach (var (name, value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        var command = $"dotnet {string.Join(' ', arguments)}";
        var output = new StringBuilder();
        using var process = Process.Start(start) ?? throw new InvalidOperationException($"'{command}' could not be started: is the dotnet command on PATH?");
        process.OutputDataReceived += (_, e) => Append(output, e.Data);
        process.ErrorDataReceived += (_, e) => Append(output, e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        using var deadline = new CancellationTokenSource(timeout);
        try
        {
            await process.WaitForExitAsync(deadline.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            // Bounded too: a process that survives SIGKILL for 10 s is reported as it is.
            await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(10));
            throw new TimeoutException($"'{command}' in {workingDirectory} did not finish within {timeout.TotalSeconds:0} s and was killed. It wrote:\n{Text(output)}");
        }
        return (process.ExitCode, Text(output));
    }

    private static void Append(StringBuilder output, string? line)
    {
        if (line is null)
        {
            return;
        }
        lock (output)
        {
            output.AppendLine(line);
        }
    }

    private static string Text(StringBuilder output)
    {
        lock (output)
        {
            return output.ToString();
        }
    }
}
