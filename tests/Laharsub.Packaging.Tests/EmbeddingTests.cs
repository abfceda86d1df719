using System.Net;
using System.Net.WebSockets;
using System.Text.Json;
using System.Text.RegularExpressions;
using Laharsub.Testing;

namespace Laharsub.Packaging.Tests;

/// <summary>
/// The packed Laharsub.Server as its README tells a user to take it: a fresh web project outside the
/// repository whose Program.cs is the README's example, on the package from a local folder feed. It builds
/// without the demo's files in its output (they come when the project sets LaharsubDemoFiles), and serves
/// topics, WebSockets and the JSON /health the README describes.
/// </summary>
[Collection(nameof(PackedPackages))]
public sealed partial class EmbeddingTests(PackedPackages packages) : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    private readonly DirectoryInfo _app = Directory.CreateTempSubdirectory("laharsub-embedding-");

    public void Dispose() => _app.Delete(recursive: true);

    private string Output => Path.Combine(_app.FullName, "bin", "Release", "net10.0");

    [Fact]
    public async Task TheReadmesExampleServesTopicsWebSocketsAndJsonHealthWithoutTheDemosFiles()
    {
        await BuildAsync(demoFiles: false);

        Assert.False(Directory.Exists(Path.Combine(Output, "demo")), $"{Output}/demo: the demo's files were copied to an app that did not ask for them");
        var port = HostProcess.FreeLoopbackPort();
        var address = new Uri($"http://127.0.0.1:{port}/");
        await using var app = await HostProcess.StartCommandAsync(["dotnet", Path.Combine(Output, "Embedding.dll"), "--urls", address.AbsoluteUri],
            address, workingDirectory: Output);
        using var http = new HttpClient { BaseAddress = address, Timeout = Bound };

        using var health = await http.GetAsync("health");
        Assert.Equal("application/json", health.Content.Headers.ContentType?.MediaType);
        using (var report = JsonDocument.Parse(await health.Content.ReadAsStringAsync()))
        {
            Assert.Equal("Healthy", report.RootElement.GetProperty("status").GetString());
            var check = report.RootElement.GetProperty("checks").GetProperty("laharsub");
            Assert.Equal("Healthy", check.GetProperty("status").GetString());
            Assert.False(string.IsNullOrEmpty(check.GetProperty("description").GetString()), "the laharsub check has no description");
            Assert.Equal(JsonValueKind.Object, check.GetProperty("data").ValueKind);
        }
        using var created = await http.PostAsync("ps/topics", content: null);
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        var topic = JsonDocument.Parse(await created.Content.ReadAsStringAsync()).RootElement.GetProperty("topicId").GetInt64();
        using var socket = new ClientWebSocket();
        socket.Options.AddSubProtocol("laharsub.v1");
        using var timeout = new CancellationTokenSource(Bound);
        await socket.ConnectAsync(new Uri($"ws://127.0.0.1:{port}/ps/subscriptions?topics={topic}"), timeout.Token);
        Assert.Equal("laharsub.v1", socket.SubProtocol);
        await socket.CloseAsync(WebSocketCloseStatus.NormalClosure, null, timeout.Token);
    }

    [Fact]
    public async Task AnAppThatSetsLaharsubDemoFilesGetsTheDemoAndTheJQueryClientInItsOutput()
    {
        await BuildAsync(demoFiles: true);

        foreach (var file in new[] { "index.html", "chat.js", "laharsub.js", "jquery.laharsub.js", "vendor/jquery-4.0.0.min.js" })
        {
            Assert.True(File.Exists(Path.Combine(Output, "demo", file)), $"{Output}/demo/{file} is missing");
        }
    }

    private async Task BuildAsync(bool demoFiles)
    {
        var version = packages.Nuspec("Laharsub.Server").Descendants().Single(e => e.Name.LocalName == "version").Value;
        var readme = File.ReadAllText(Path.Combine(PackedPackages.RepositoryRoot, "src/Server/README.md"));
        var example = CSharpBlockPattern().Match(readme);
        Assert.True(example.Success, "src/Server/README.md has no ```csharp block");
        FreshProject.Prepare(_app.FullName, packages.Feed);
        File.WriteAllText(Path.Combine(_app.FullName, "Program.cs"), example.Groups[1].Value);
        FreshProject.WriteProject(_app.FullName, "Embedding.csproj", "Microsoft.NET.Sdk.Web",
            $"<LaharsubDemoFiles>{(demoFiles ? "true" : "false")}</LaharsubDemoFiles>", [("Laharsub.Server", $"[{version}]")]);
        // A package cache of its own: a Laharsub.Server of the same version cached on this machine is never what the app gets.
        var environment = new Dictionary<string, string> { ["NUGET_PACKAGES"] = Path.Combine(_app.FullName, "packages") };
        await DotnetCli.RunAsync(_app.FullName, TimeSpan.FromSeconds(240), environment,
            "build", "--configuration", "Release", "--disable-build-servers", "-nologo");
    }

    [GeneratedRegex(@"```csharp\n(.*?)```", RegexOptions.Singleline)]
    private static partial Regex CSharpBlockPattern();
}
