namespace Laharsub.Packaging.Tests;

/// <summary>A project folder outside the repository, as a user's own: MSBuild and NuGet see nothing of the repository's settings.</summary>
internal static class FreshProject
{
    /// <summary>
    /// Stops MSBuild's search for Directory.Build.* above <paramref name="folder"/>, and writes a nuget.config
    /// with the machine's usual sources plus the packed packages (<paramref name="feed"/>) and the machine's
    /// package folder (where the repository's restore put what it downloaded), so that restore needs no
    /// download for what is there.
    /// </summary>
    public static void Prepare(string folder, string feed)
    {
        File.WriteAllText(Path.Combine(folder, "Directory.Build.props"), "<Project />\n");
        File.WriteAllText(Path.Combine(folder, "Directory.Build.targets"), "<Project />\n");
        var machinePackages = Environment.GetEnvironmentVariable("NUGET_PACKAGES") is { Length: > 0 } configured
            ? configured
            : Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
        var machineSource = Directory.Exists(machinePackages) ? $"""<add key="machine-packages" value="{machinePackages}" />""" : "";
        File.WriteAllText(Path.Combine(folder, "nuget.config"), $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <add key="laharsub-packed" value="{feed}" />
                {machineSource}
              </packageSources>
            </configuration>
            """);
    }

    /// <summary>
    /// Writes the project file <paramref name="name"/>: net10.0 with nullable, implicit usings and warnings as
    /// errors, as a careful user's, plus <paramref name="properties"/> (XML elements) and the package
    /// references of <paramref name="packages"/> (id, version range).
    /// </summary>
    public static void WriteProject(string folder, string name, string sdk, string properties, IEnumerable<(string Id, string Version)> packages) =>
        File.WriteAllText(Path.Combine(folder, name), $"""
            <Project Sdk="{sdk}">
              <PropertyGroup>
                <TargetFramework>net10.0</TargetFramework>
                <Nullable>enable</Nullable>
                <ImplicitUsings>enable</ImplicitUsings>
                <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
                {properties}
              </PropertyGroup>
              <ItemGroup>
            {string.Concat(packages.Select(package => $"    <PackageReference Include=\"{package.Id}\" Version=\"{package.Version}\" />\n"))}  </ItemGroup>
            </Project>
            """);
}
