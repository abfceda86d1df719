using Laharsub.Server.Tests.Support;

namespace Laharsub.Server.Tests.Architecture;

/// <summary>
/// The server library's folders are layers: tests/architecture/layers.py reads which folder's files
/// use which other folder (usings and type names) and checks the arrows against its rules. The first
/// test runs it on the repository; the others run it on tiny trees, to show it sees what it should.
/// The trees need not compile: the script reads text.
/// </summary>
public sealed class LayeringTests : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    /// <summary>Where Laharsub.sln is; the script is tests/architecture/layers.py under it.</summary>
    private static string RepositoryRoot { get; } = FindRepositoryRoot();

    private readonly DirectoryInfo _tree = Directory.CreateTempSubdirectory("laharsub-layers-");

    public void Dispose() => _tree.Delete(recursive: true);

    [Fact]
    public async Task TheServerLibrarysArrowsPointOneWay()
    {
        var run = await RunAsync(RepositoryRoot);

        Assert.True(run.ExitCode == 0, $"tests/architecture/layers.py exited with {run.ExitCode}:\n{run.Output}");
    }

    [Fact]
    public async Task TheArchitecturePagesTableIsTheScriptsOutput()
    {
        var run = await RunAsync(RepositoryRoot, "--markdown-only");
        Assert.True(run.ExitCode == 0, run.Output);
        var table = run.Output.Trim().ReplaceLineEndings("\n");
        var page = File.ReadAllText(Path.Combine(RepositoryRoot, "docs", "architecture.md")).ReplaceLineEndings("\n");

        Assert.True(page.Contains(table, StringComparison.Ordinal),
            "docs/architecture.md's arrow table is not what tests/architecture/layers.py --markdown-only prints now; paste this in:\n" + table);
    }

    [Fact]
    public async Task AnUpwardArrowFailsTheCheck()
    {
        Write("src/Server/Storage/A.cs", """
            using Laharsub.Server.Hosting;

            namespace Laharsub.Server.Storage;

            internal sealed class StoreThing
            {
                internal static Type Host => typeof(HostThing);
            }
            """);
        Write("src/Server/Hosting/B.cs", """
            namespace Laharsub.Server.Hosting;

            internal static class HostThing
            {
                internal static StoreThing Create() => new();
            }
            """);

        var run = await RunAsync(_tree.FullName);

        Assert.True(run.ExitCode == 1, $"exit code {run.ExitCode}, not 1:\n{run.Output}");
        Assert.Contains("Storage → Hosting", run.Output, StringComparison.Ordinal);
        Assert.Contains("both ways", run.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AMemberNamedLikeATypeIsNotAnArrow()
    {
        Write("src/Server/Storage/Message.cs", """
            namespace Laharsub.Server.Storage;

            public sealed class Message;
            """);
        Write("src/Server/Endpoints/Errors.cs", """
            namespace Laharsub.Server.Endpoints;

            internal static class Errors
            {
                internal static string Describe(Exception exception) => exception.Message;
            }
            """);

        var run = await RunAsync(_tree.FullName);

        Assert.True(run.ExitCode == 0, $"exit code {run.ExitCode}, not 0:\n{run.Output}");
        Assert.DoesNotContain("Endpoints → Storage", Arrows(run.Output));
    }

    [Fact]
    public async Task ATypeNamedInACommentOrAStringIsNotAnArrow()
    {
        Write("src/Server/Hosting/B.cs", """
            namespace Laharsub.Server.Hosting;

            internal static class HostThing;
            """);
        Write("src/Server/Storage/A.cs", """"
            namespace Laharsub.Server.Storage;

            // HostThing, /* HostThing */
            /// <summary>Not a <see cref="HostThing"/>.</summary>
            internal sealed class StoreThing
            {
                internal const string Plain = "HostThing \"HostThing\"";
                internal const string Verbatim = @"HostThing ""HostThing""";
                internal static string Interpolated => $"{Plain} HostThing {{HostThing}}";
                internal const string Raw = """
                    HostThing "HostThing"
                    """;
            }
            """");

        var run = await RunAsync(_tree.FullName);

        Assert.True(run.ExitCode == 0, $"exit code {run.ExitCode}, not 0:\n{run.Output}");
        Assert.DoesNotContain("Storage → Hosting", Arrows(run.Output));
    }

    private void Write(string path, string text)
    {
        var file = Path.Combine(_tree.FullName, path);
        Directory.CreateDirectory(Path.GetDirectoryName(file)!);
        File.WriteAllText(file, text);
    }

    /// <summary>The arrows of the script's table ("From → To"), whatever its violations say.</summary>
    private static List<string> Arrows(string output)
    {
        var rows = output.Split('\n')
            .Where(line => line.StartsWith('|'))
            .Select(line => line.Trim().Trim('|').Split('|').Select(cell => cell.Trim()).ToArray())
            .ToList();
        Assert.True(rows.Count >= 2, "No table in the output:\n" + output);
        var columns = rows[0];  // "from \ to", then the folders; rows[1] is the |---| line
        return rows.Skip(2)
            .SelectMany(row => Enumerable.Range(1, row.Length - 1)
                .Where(i => row[i].Length > 0)
                .Select(i => $"{row[0]} → {columns[i]}"))
            .ToList();
    }

    /// <summary>Runs layers.py on the tree at <paramref name="root"/>; its output and error output together.</summary>
    private static async Task<Run> RunAsync(string root, params string[] options)
    {
        var (exitCode, output) = await Command.RunAsync("python3", [Path.Combine(RepositoryRoot, "tests", "architecture", "layers.py"), "--root", root, .. options], Bound,
            "the layering check needs python3 on PATH");
        return new Run(exitCode, output);
    }

    private static string FindRepositoryRoot()
    {
        for (var folder = new DirectoryInfo(AppContext.BaseDirectory); folder is not null; folder = folder.Parent)
        {
            if (File.Exists(Path.Combine(folder.FullName, "Laharsub.sln")))
            {
                return folder.FullName;
            }
        }
        throw new InvalidOperationException($"No Laharsub.sln above {AppContext.BaseDirectory}: the tests run from the repository's build output.");
    }

    private sealed record Run(int ExitCode, string Output);
}
