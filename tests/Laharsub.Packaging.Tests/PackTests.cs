using System.IO.Compression;

namespace Laharsub.Packaging.Tests;

/// <summary>Each package packs, passes package validation, and carries what a package page and a debugger need.</summary>
[Collection(nameof(PackedPackages))]
public sealed class PackTests(PackedPackages packages)
{
    public static TheoryData<string> PackageIds => [.. PackedPackages.Projects.Keys];

    [Theory]
    [MemberData(nameof(PackageIds))]
    public void APackageHasItsReadmeLicenseTagsAndRepository(string id)
    {
        var metadata = packages.Nuspec(id).Elements().Single(e => e.Name.LocalName == "metadata");
        string? Value(string name) => metadata.Elements().SingleOrDefault(e => e.Name.LocalName == name)?.Value;

        var license = metadata.Elements().Single(e => e.Name.LocalName == "license");
        Assert.Equal(("expression", "MIT"), (license.Attribute("type")?.Value, license.Value));
        Assert.Equal("README.md", Value("readme"));
        Assert.False(string.IsNullOrWhiteSpace(Value("tags")), $"{id} has no tags.");
        Assert.False(string.IsNullOrWhiteSpace(Value("description")), $"{id} has no description.");
        // Source link's record of where the code came from: the commit the package was built from.
        var repository = metadata.Elements().Single(e => e.Name.LocalName == "repository");
        Assert.Matches("^[0-9a-f]{40}$", repository.Attribute("commit")?.Value ?? "");

        using var package = ZipFile.OpenRead(packages.PackagePath(id));
        var readme = package.GetEntry("README.md") ?? throw new Xunit.Sdk.XunitException($"{id} does not contain README.md.");
        using (var reader = new StreamReader(readme.Open()))
        {
            var projectFolder = Path.GetDirectoryName(Path.Combine(PackedPackages.RepositoryRoot, PackedPackages.Projects[id]))!;
            Assert.Equal(File.ReadAllText(Path.Combine(projectFolder, "README.md")), reader.ReadToEnd());
        }
        var files = package.Entries.Select(entry => entry.FullName).ToList();
        Assert.Contains($"lib/net10.0/{id}.dll", files);
        Assert.Contains($"lib/net10.0/{id}.xml", files);
    }

    [Theory]
    [MemberData(nameof(PackageIds))]
    public void APackageShipsItsSymbolsBesideIt(string id)
    {
        using var symbols = ZipFile.OpenRead(packages.PackagePath(id, ".snupkg"));
        Assert.Contains($"lib/net10.0/{id}.pdb", symbols.Entries.Select(entry => entry.FullName));
    }
}
