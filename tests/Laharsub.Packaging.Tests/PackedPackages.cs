using System.IO.Compression;
using System.Reflection;
using System.Text.RegularExpressions;
using System.Xml.Linq;

namespace Laharsub.Packaging.Tests;

/// <summary>
/// Packs the packages once, from the build the tests run against ("dotnet pack --no-build",
/// which also runs package validation), into a temporary folder that serves as a local feed.
/// </summary>
public sealed class PackedPackages : IAsyncLifetime
{
    /// <summary>The packable projects, by package id.</summary>
    public static readonly IReadOnlyDictionary<string, string> Projects = new Dictionary<string, string>
    {
        ["Laharsub.Server"] = "src/Server/Laharsub.Server.csproj",
        ["Laharsub.Server.Redis"] = "src/Server.Redis/Laharsub.Server.Redis.csproj",
        ["Laharsub.Client"] = "src/Clients/DotNet/Laharsub.Client.csproj",
        ["Laharsub.Server.Specification.Tests"] = "src/Server.Specification.Tests/Laharsub.Server.Specification.Tests.csproj",
    };

    private static readonly TimeSpan PackTimeout = TimeSpan.FromSeconds(90);

    private readonly DirectoryInfo _folder = Directory.CreateTempSubdirectory("laharsub-packages-");

    /// <summary>The repository's root (where Laharsub.sln is).</summary>
    public static string RepositoryRoot { get; } = FindRepositoryRoot();

    /// <summary>The folder holding the .nupkg and .snupkg files: a NuGet local feed.</summary>
    public string Feed => _folder.FullName;

    public async Task InitializeAsync()
    {
        var configuration = typeof(PackedPackages).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(attribute => attribute.Key == "Configuration").Value!;
        foreach (var project in Projects.Values)
        {
            await DotnetCli.RunAsync(RepositoryRoot, PackTimeout, environment: null,
                "pack", project, "--configuration", configuration, "--no-build", "--output", Feed, "-nologo");
        }
    }

    public Task DisposeAsync()
    {
        _folder.Delete(recursive: true);
        return Task.CompletedTask;
    }

    /// <summary>The one package of <paramref name="id"/> in the feed (<c>.nupkg</c>, or <c>.snupkg</c> for its symbols).</summary>
    public string PackagePath(string id, string extension = ".nupkg")
    {
        // "Laharsub.Server.*" would match Laharsub.Server.Redis too: the version must follow the id.
        var name = new Regex($@"^{Regex.Escape(id)}\.\d+\.\d+\.\d+(-[^/]+)?{Regex.Escape(extension)}$");
        var matches = Directory.GetFiles(Feed).Where(path => name.IsMatch(Path.GetFileName(path))).ToList();
        return matches.Count == 1
            ? matches[0]
            : throw new InvalidOperationException($"Expected one {id} {extension} in {Feed}, found: {string.Join(", ", Directory.GetFiles(Feed).Select(Path.GetFileName))}");
    }

    /// <summary>The package's .nuspec.</summary>
    public XElement Nuspec(string id)
    {
        using var package = ZipFile.OpenRead(PackagePath(id));
        var entry = package.GetEntry($"{id}.nuspec") ?? throw new InvalidOperationException($"{PackagePath(id)} has no {id}.nuspec.");
        using var stream = entry.Open();
        return XElement.Load(stream);
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
        throw new InvalidOperationException($"No Laharsub.sln above {AppContext.BaseDirectory}: the packaging tests run from the repository's build output.");
    }
}

[CollectionDefinition(nameof(PackedPackages))]
public sealed class PackedPackagesGroup : ICollectionFixture<PackedPackages>;
