using Microsoft.Extensions.DependencyInjection;
using System.Xml.Linq;

namespace Laharsub.Packaging.Tests;

/// <summary>
/// The packed store specification does what its README says for a store written elsewhere: a fresh xUnit
/// project outside the repository (and outside the solution) references the packed
/// Laharsub.Server.Specification.Tests and Laharsub.Server, subclasses <c>LaharsubStoreSpecification</c>
/// for a deliberately broken store, and <c>dotnet test</c> fails naming exactly the facts the bug breaks.
/// </summary>
[Collection(nameof(PackedPackages))]
public sealed class SpecificationTests(PackedPackages packages) : IDisposable
{
    /// <summary>The facts that a store which never calls <c>ITopicSignals.Signal</c> breaks, and only those.</summary>
    private static readonly string[] SignalFacts =
    [
        "APublishSignalsItsTopic",
        "APublishToSeveralTopicsSignalsEachTopic",
        "DeletingATopicSignalsIt",
        "ATopicUnusedForTopicIdleTimeToLiveIsDeletedAndSignalled",
        "AReplacementIsTheWholeDocumentStoredAsTheNextMessage",
    ];

    private readonly DirectoryInfo _project = Directory.CreateTempSubdirectory("laharsub-specification-");

    public void Dispose() => _project.Delete(recursive: true);

    [Fact]
    public async Task TheSpecificationFailsAStoreThatNeverSignalsOnTheFactsAboutSignals()
    {
        WriteProject();
        // A package cache of its own, so that a Laharsub package of the same version cached on this machine
        // (from an earlier run) is never what the project gets.
        var environment = new Dictionary<string, string> { ["NUGET_PACKAGES"] = Path.Combine(_project.FullName, "packages") };
        var results = Path.Combine(_project.FullName, "results");

        await DotnetCli.RunAsync(_project.FullName, TimeSpan.FromSeconds(240), environment,
            "build", "--configuration", "Release", "--disable-build-servers", "-nologo");
        // The four signal facts each wait 10 s for the signal that never comes; the others take seconds.
        var (exitCode, output) = await DotnetCli.RunToExitAsync(_project.FullName, TimeSpan.FromSeconds(240), environment,
            "test", "--configuration", "Release", "--no-build", "--disable-build-servers", "-nologo",
            "--logger", "trx;LogFileName=specification.trx", "--results-directory", results);

        Assert.True(exitCode != 0, $"dotnet test passed a store that never signals. It wrote:\n{output}");
        var outcomes = Outcomes(Path.Combine(results, "specification.trx"));
        var failed = outcomes.Where(o => o.Value != "Passed").Select(o => o.Key).Order().ToArray();
        Assert.Equal(SignalFacts.Order(), failed);
        foreach (var fact in SignalFacts)
        {
            Assert.Contains($"Failed NeverSignallingStoreTests.{fact}", output);
        }
        Assert.Contains("the store did not call ITopicSignals.Signal(", output);
        // What the broken store does right passes: the facts that do not need a signal.
        Assert.Equal("Passed", outcomes["MessagesGetConsecutiveIdsFromOneInEachTopic"]);
        Assert.Equal("Passed", outcomes["ADeletedTopicIsGoneForInfoReadsPublishesAndListings"]);
    }

    /// <summary>Outcome by fact (method name; a theory's cases share one entry, the worst kept) from a .trx file.</summary>
    private static Dictionary<string, string> Outcomes(string trx)
    {
        var outcomes = new Dictionary<string, string>();
        foreach (var result in XElement.Load(trx).Descendants().Where(e => e.Name.LocalName == "UnitTestResult"))
        {
            var name = result.Attribute("testName")!.Value;
            name = name.Split('(')[0];
            name = name[(name.LastIndexOf('.') + 1)..];
            var outcome = result.Attribute("outcome")!.Value;
            if (!outcomes.TryGetValue(name, out var earlier) || earlier == "Passed")
            {
                outcomes[name] = outcome;
            }
        }
        return outcomes;
    }

    private void WriteProject()
    {
        var version = packages.Nuspec("Laharsub.Server.Specification.Tests").Descendants().Single(e => e.Name.LocalName == "version").Value;
        // The test packages at the versions the repository's own tests use, so restore finds them in the
        // machine's package folder.
        var pinned = XElement.Load(Path.Combine(PackedPackages.RepositoryRoot, "Directory.Packages.props"))
            .Descendants("PackageVersion").ToDictionary(p => p.Attribute("Include")!.Value, p => p.Attribute("Version")!.Value);
        FreshProject.Prepare(_project.FullName, packages.Feed);
        FreshProject.WriteProject(_project.FullName, "BrokenStore.Tests.csproj", "Microsoft.NET.Sdk", "",
        [
            ("Laharsub.Server", $"[{version}]"),
            ("Laharsub.Server.Specification.Tests", $"[{version}]"),
            ("Microsoft.NET.Test.Sdk", pinned["Microsoft.NET.Test.Sdk"]),
            ("xunit", pinned["xunit"]),
            ("xunit.runner.visualstudio", pinned["xunit.runner.visualstudio"]),
        ]);
        File.WriteAllText(Path.Combine(_project.FullName, "NeverSignallingStoreTests.cs"), """
            using Laharsub.Server.Specification;
            using Laharsub.Server.Storage;
            using Microsoft.Extensions.DependencyInjection;
            using Microsoft.Extensions.Options;

            /// <summary>
            /// A deliberately broken store: Laharsub's in-memory store as AddLaharsub registers it, but
            /// wired to signals that go nowhere instead of the ones it is given, so it never says that a
            /// topic changed. Everything else it does right, on the real clock.
            /// </summary>
            public sealed class NeverSignallingStoreTests : LaharsubStoreSpecification
            {
                private readonly List<ServiceProvider> _providers = [];

                protected override TimeSpan ShortTimeToLive => TimeSpan.FromSeconds(1);

                protected override ValueTask<ILaharsubStore> CreateStoreAsync(LaharsubStoreOptions options, ITopicSignals signals)
                {
                    var services = new ServiceCollection();
                    services.AddSingleton(Options.Create(options));
                    services.AddSingleton<ITopicSignals>(new Nowhere()); // the bug: `signals` is never called
                    services.AddLaharsub();
                    var provider = services.BuildServiceProvider();
                    _providers.Add(provider);
                    return ValueTask.FromResult(provider.GetRequiredService<ILaharsubStore>());
                }

                protected override Task LetTimePassAsync(TimeSpan time) => Task.Delay(time);

                public override async Task DisposeAsync()
                {
                    await base.DisposeAsync();
                    foreach (var provider in _providers)
                    {
                        await provider.DisposeAsync();
                    }
                }

                private sealed class Nowhere : ITopicSignals
                {
                    public void Signal(long topicId) { }

                    public void SignalAll() { }
                }
            }
            """);
    }
}
