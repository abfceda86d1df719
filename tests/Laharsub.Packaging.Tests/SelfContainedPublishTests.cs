using System.Net;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.Json;
using Laharsub.Testing;

namespace Laharsub.Packaging.Tests;

/// <summary>
/// What deploy/Dockerfile does, short of the container (its base images cannot be pulled here): the
/// sources its build stage copies, published self-contained for linux-x64 outside the repository, and
/// the executable started with a clean environment on a machine where no .NET can be found, listening
/// on <c>ASPNETCORE_HTTP_PORTS</c> as in the image.
/// </summary>
public sealed class SelfContainedPublishTests : IDisposable
{
    private static readonly TimeSpan PublishTimeout = TimeSpan.FromMinutes(10);
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    private readonly string _work = Directory.CreateTempSubdirectory("laharsub-publish-").FullName;

    public void Dispose() => Directory.Delete(_work, recursive: true);

    [Fact]
    public async Task ThePublishedServerServesWithACleanEnvironmentAndNoDotnetOnTheMachine()
    {
        var source = Path.Combine(_work, "source");
        var publish = Path.Combine(_work, "app");
        var home = Directory.CreateDirectory(Path.Combine(_work, "home")).FullName;
        CopyBuildStageSources(source);
        await DotnetCli.RunAsync(source, PublishTimeout, environment: null,
            "publish", "src/Server/Host/Laharsub.Server.Host.csproj", "-c", "Release", "-r", "linux-x64", "--self-contained", "-o", publish);

        // An empty file system over the .NET installation (a private mount namespace), and an environment
        // with nothing but PATH, HOME and the port: the executable has only what the publish put beside it.
        var dotnetRoot = Path.GetFullPath(Path.Combine(RuntimeEnvironment.GetRuntimeDirectory(), "../../.."));
        var port = HostProcess.FreeLoopbackPort();
        string[] command = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", "mount -t tmpfs none \"$0\" && exec \"$@\"", dotnetRoot,
            "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", $"HOME={home}", $"ASPNETCORE_HTTP_PORTS={port}",
            Path.Combine(publish, "Laharsub.Server.Host"), "--Laharsub:Demo:Enabled=false"];
        await using var server = await HostProcess.StartCommandAsync(command, new Uri($"http://127.0.0.1:{port}/"), workingDirectory: publish);

        Assert.Contains($"Now listening on: http://[::]:{port}", server.Output, StringComparison.Ordinal);
        var runtime = File.ReadLines($"/proc/{server.ProcessId}/maps").FirstOrDefault(line => line.EndsWith("/libcoreclr.so", StringComparison.Ordinal));
        Assert.True(runtime?.Contains(publish + "/", StringComparison.Ordinal) == true, $"The runtime was not loaded from {publish}: {runtime}");

        using var http = new HttpClient { BaseAddress = server.ApiAddress, Timeout = Bound };
        using var created = await http.PostAsync("topics", content: null);
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        var topic = JsonDocument.Parse(await created.Content.ReadAsStringAsync()).RootElement.GetProperty("topicId").GetInt64();
        using var published = await http.PostAsync($"topics/{topic}", new StringContent("hello from the published server", Encoding.UTF8, "text/plain"));
        Assert.Equal(HttpStatusCode.Created, published.StatusCode);
        using var polled = await http.GetAsync($"subscriptions?topics={topic}:1");
        Assert.Equal(HttpStatusCode.OK, polled.StatusCode);
        Assert.Contains("hello from the published server", await polled.Content.ReadAsStringAsync(), StringComparison.Ordinal);
    }

    /// <summary>
    /// Copies what the Dockerfile's build stage copies (its <c>COPY</c> lines without <c>--from</c>), less
    /// what Dockerfile.dockerignore leaves out (build output), so that a file the build needs and the
    /// Dockerfile forgets fails this test.
    /// </summary>
    private static void CopyBuildStageSources(string destination)
    {
        var root = PackedPackages.RepositoryRoot;
        var copies = File.ReadLines(Path.Combine(root, "deploy/Dockerfile"))
            .Select(line => line.Trim())
            .Where(line => line.StartsWith("COPY ", StringComparison.Ordinal) && !line.Contains("--from", StringComparison.Ordinal))
            .ToList();
        Assert.NotEmpty(copies);
        foreach (var copy in copies)
        {
            var words = copy.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            var target = Path.Combine(destination, words[^1]);
            foreach (var path in words[1..^1])
            {
                var from = Path.Combine(root, path);
                if (Directory.Exists(from))
                {
                    CopyDirectory(from, Path.Combine(destination, path.TrimEnd('/')));
                }
                else
                {
                    Directory.CreateDirectory(target);
                    File.Copy(from, Path.Combine(target, Path.GetFileName(path)));
                }
            }
        }
    }

    private static readonly string[] BuildOutput = ["bin", "obj", "node_modules"];

    private static void CopyDirectory(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (var file in Directory.EnumerateFiles(from))
        {
            File.Copy(file, Path.Combine(to, Path.GetFileName(file)));
        }
        foreach (var directory in Directory.EnumerateDirectories(from).Where(d => !BuildOutput.Contains(Path.GetFileName(d))))
        {
            CopyDirectory(directory, Path.Combine(to, Path.GetFileName(directory)));
        }
    }
}
