namespace Laharsub.LoadTestClient.Hosting;

/// <summary>
/// Debian's nginx as a private instance: a configuration written into a fresh temporary prefix
/// (<c>nginx -p PREFIX -c PREFIX/FILE</c>), run in the foreground as a child, stopped and its prefix
/// removed on dispose. Nothing touches /etc/nginx, /var/log/nginx or /run, so it needs no set-up.
/// </summary>
/// <remarks>
/// Laharsub.Testing compiles this file too (a linked source file, as <see cref="ChildProcess"/>): the
/// load test's nchan and the tests' reverse proxy start nginx the same way.
/// </remarks>
internal sealed class PrivateNginx : IAsyncDisposable
{
    private PrivateNginx(ChildProcess process, string prefix, string commandLine)
    {
        Process = process;
        Prefix = prefix;
        CommandLine = commandLine;
    }

    /// <summary>The master process; its workers are its children.</summary>
    public ChildProcess Process { get; }

    /// <summary>The temporary directory nginx runs in: relative paths of the configuration are below it.</summary>
    public string Prefix { get; }

    public string CommandLine { get; }

    /// <summary>nginx in /usr/sbin (Debian's) or on the PATH; null when there is none.</summary>
    public static string? Find()
    {
        var directories = new List<string> { "/usr/sbin" };
        directories.AddRange((Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries));
        return directories.Select(d => Path.Combine(d, "nginx")).FirstOrDefault(File.Exists);
    }

    /// <summary>
    /// Writes <paramref name="files"/> (name and text; the first is the main configuration) into a fresh
    /// prefix and starts nginx on them. The configuration must keep nginx in the foreground (<c>daemon off;</c>).
    /// </summary>
    /// <param name="installHint">What to do when nginx is missing, e.g. the command that installs it.</param>
    /// <param name="launcher">A command that runs nginx, e.g. taskset to pin it (its workers inherit the mask).</param>
    /// <exception cref="InvalidOperationException">nginx is missing or could not be started; the message says what to do.</exception>
    public static PrivateNginx Start(IReadOnlyList<(string Name, string Text)> files, Action<string> onOutput, string installHint,
        IReadOnlyList<string>? launcher = null, IEnumerable<KeyValuePair<string, string?>>? environment = null)
    {
        var nginx = Find() ?? throw new InvalidOperationException($"nginx is not installed (no nginx in /usr/sbin or on PATH): {installHint}.");
        var prefix = Directory.CreateTempSubdirectory("laharsub-nginx-").FullName;
        foreach (var (name, text) in files)
        {
            File.WriteAllText(Path.Combine(prefix, name), text);
        }
        string[] command = [.. launcher ?? [], nginx, "-p", prefix + "/", "-c", Path.Combine(prefix, files[0].Name)];
        try
        {
            var process = ChildProcess.Start("nginx", command[0], command[1..], onOutput, workingDirectory: prefix, environment: environment, installHint: installHint);
            return new PrivateNginx(process, prefix, string.Join(' ', command));
        }
        catch (InvalidOperationException)
        {
            Directory.Delete(prefix, recursive: true);
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        // SIGTERM is nginx's fast shutdown: workers close their connections and exit.
        await Process.StopAsync(TimeSpan.FromSeconds(15)).ConfigureAwait(false);
        Process.Dispose();
        try
        {
            Directory.Delete(Prefix, recursive: true);
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException)
        {
            // A worker that ran as another user (nginx started as root runs them as nobody) may leave
            // a directory behind in /tmp; it holds nothing.
        }
    }
}
