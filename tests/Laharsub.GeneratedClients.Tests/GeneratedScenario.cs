using System.Text.Json;
using Laharsub.Packaging.Tests;
using Laharsub.Testing;

namespace Laharsub.GeneratedClients.Tests;

/// <summary>
/// A folder outside the repository (so that none of its build settings apply) holding one of the
/// Scenarios, the OpenAPI document a real server serves, and the client a generator writes from it;
/// the scenario is built against that client and run against the server.
/// </summary>
internal sealed class GeneratedScenario : IDisposable
{
    private static readonly TimeSpan ToolTimeout = TimeSpan.FromSeconds(120);

    // Kiota checks for a newer version of itself online and shows hints unless told not to.
    private static readonly Dictionary<string, string> ToolEnvironment = new()
    {
        ["KIOTA_OFFLINE_ENABLED"] = "true",
        ["KIOTA_TUTORIAL_ENABLED"] = "false",
        ["KIOTA_CLI_TELEMETRY_OPTOUT"] = "true",
    };

    private readonly DirectoryInfo _folder;

    /// <summary>
    /// Starts the server, has the generator (a command of the tool manifest, with its arguments) write a
    /// client from the server's document into a folder holding <paramref name="scenario"/>, builds and runs
    /// the scenario, and hands its outcome to <paramref name="check"/> while the server still runs.
    /// </summary>
    public static async Task RunAsync(string scenario, string[] generator, Func<HostProcess, JsonElement, Task> check)
    {
        using var folder = new GeneratedScenario(scenario);
        await using var server = await HostProcess.StartAsync();
        await folder.WriteDocumentAsync(server);
        await folder.RunToolAsync(generator);
        await check(server, await folder.BuildAndRunAsync(server));
    }

    private GeneratedScenario(string scenario)
    {
        _folder = Directory.CreateTempSubdirectory($"laharsub-{scenario.ToLowerInvariant()}-");
        var source = Path.Combine(AppContext.BaseDirectory, "Scenarios", scenario);
        foreach (var file in Directory.GetFiles(source))
        {
            File.Copy(file, Path.Combine(_folder.FullName, Path.GetFileName(file)));
        }
        // The generators, pinned: the tool manifest beside this test project.
        Directory.CreateDirectory(Path.Combine(_folder.FullName, ".config"));
        File.Copy(Path.Combine(AppContext.BaseDirectory, ".config", "dotnet-tools.json"), Path.Combine(_folder.FullName, ".config", "dotnet-tools.json"));
        File.WriteAllText(Path.Combine(_folder.FullName, "Directory.Build.props"), "<Project />\n");
        File.WriteAllText(Path.Combine(_folder.FullName, "Directory.Build.targets"), "<Project />\n");
    }

    private string Folder => _folder.FullName;

    /// <summary>Saves the server's <c>/openapi/v1.json</c> as <c>openapi.json</c> in the folder.</summary>
    private async Task WriteDocumentAsync(HostProcess server)
    {
        using var http = new HttpClient { BaseAddress = server.BaseAddress, Timeout = TimeSpan.FromSeconds(10) };
        File.WriteAllText(Path.Combine(Folder, "openapi.json"), await http.GetStringAsync("openapi/v1.json"));
    }

    /// <summary>
    /// Runs a generator of the tool manifest: <c>dotnet tool restore</c> first installs it from NuGet
    /// when this machine does not have it yet (a test that cannot get it fails with restore's output).
    /// </summary>
    private async Task RunToolAsync(params string[] arguments)
    {
        await DotnetCli.RunAsync(Folder, ToolTimeout, ToolEnvironment, "tool", "restore");
        await DotnetCli.RunAsync(Folder, ToolTimeout, ToolEnvironment, ["tool", "run", .. arguments]);
    }

    /// <summary>Builds the scenario with the generated client, runs it against <paramref name="server"/>, and returns what it printed last, as JSON.</summary>
    private async Task<JsonElement> BuildAndRunAsync(HostProcess server)
    {
        await DotnetCli.RunAsync(Folder, TimeSpan.FromSeconds(180), null, "build", "--configuration", "Release", "--disable-build-servers", "-nologo");
        var output = await DotnetCli.RunAsync(Folder, TimeSpan.FromSeconds(60), null,
            Path.Combine(Folder, "bin", "Release", "net10.0", "Scenario.dll"), server.BaseAddress.AbsoluteUri);
        var last = output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)[^1];
        try
        {
            return JsonDocument.Parse(last).RootElement.Clone();
        }
        catch (JsonException)
        {
            throw new InvalidOperationException($"The scenario did not end with its outcome in JSON. It wrote:\n{output}");
        }
    }

    public void Dispose() => _folder.Delete(recursive: true);
}
