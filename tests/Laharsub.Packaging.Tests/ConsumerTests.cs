using Laharsub.Testing;

namespace Laharsub.Packaging.Tests;

/// <summary>
/// A fresh console app, outside the repository, references the packed Laharsub.Client from a local
/// folder feed (and nothing else: restore needs no network), builds, and publishes and receives a
/// message through a real Laharsub server on loopback.
/// </summary>
[Collection(nameof(PackedPackages))]
public sealed class ConsumerTests(PackedPackages packages) : IDisposable
{
    private readonly DirectoryInfo _app = Directory.CreateTempSubdirectory("laharsub-consumer-");

    public void Dispose() => _app.Delete(recursive: true);

    [Fact]
    public async Task AFreshConsoleAppPublishesAndReceivesThroughThePackedClient()
    {
        var version = packages.Nuspec("Laharsub.Client").Descendants().Single(e => e.Name.LocalName == "version").Value;
        WriteApp(version);
        await using var server = await LaharsubTestServer.StartAsync();
        var text = $"hello from a package consumer {Guid.NewGuid():N}";
        // A package cache of its own, so that an older Laharsub.Client of the same version cached on this
        // machine is never what the app gets.
        var environment = new Dictionary<string, string> { ["NUGET_PACKAGES"] = Path.Combine(_app.FullName, "packages") };

        await DotnetCli.RunAsync(_app.FullName, TimeSpan.FromSeconds(150), environment,
            "build", "--configuration", "Release", "--disable-build-servers", "-nologo");
        var output = await DotnetCli.RunAsync(_app.FullName, TimeSpan.FromSeconds(45), environment,
            Path.Combine(_app.FullName, "bin", "Release", "net10.0", "Consumer.dll"), server.ApiAddress.AbsoluteUri, text);

        Assert.Contains($"received 1: {text}", output);
        var topics = await server.Store.ListTopicsAsync(afterTopicId: 0, limit: 10).AsTask().WaitAsync(TimeSpan.FromSeconds(10));
        var topic = Assert.Single(topics);
        Assert.Equal(1, topic.LastMessageId);
    }

    private void WriteApp(string clientVersion)
    {
        // Stop MSBuild's search for Directory.Build.* above the temporary folder.
        File.WriteAllText(Path.Combine(_app.FullName, "Directory.Build.props"), "<Project />\n");
        File.WriteAllText(Path.Combine(_app.FullName, "Directory.Build.targets"), "<Project />\n");
        File.WriteAllText(Path.Combine(_app.FullName, "nuget.config"), $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <clear />
                <add key="packed" value="{packages.Feed}" />
                <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
              </packageSources>
              <packageSourceMapping>
                <packageSource key="packed">
                  <package pattern="Laharsub.*" />
                </packageSource>
                <packageSource key="nuget.org">
                  <package pattern="*" />
                </packageSource>
              </packageSourceMapping>
            </configuration>
            """);
        File.WriteAllText(Path.Combine(_app.FullName, "Consumer.csproj"), $"""
            <Project Sdk="Microsoft.NET.Sdk">
              <PropertyGroup>
                <OutputType>Exe</OutputType>
                <TargetFramework>net10.0</TargetFramework>
                <Nullable>enable</Nullable>
                <ImplicitUsings>enable</ImplicitUsings>
                <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
              </PropertyGroup>
              <ItemGroup>
                <PackageReference Include="Laharsub.Client" Version="[{clientVersion}]" />
              </ItemGroup>
            </Project>
            """);
        File.WriteAllText(Path.Combine(_app.FullName, "Program.cs"), """
            using Laharsub.Client;

            // Usage: Consumer <api address> <text>. Publishes the text to a new topic and prints it as received.
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            await using var client = new LaharsubClient(new Uri(args[0]));
            var topic = await client.CreateTopicAsync(timeout.Token);
            await using var subscription = client.Subscribe();
            subscription.Retrying += (_, e) => Console.Error.WriteLine($"retrying in {e.Delay}: {e.Error.Message}");
            subscription.Add(topic, from: 1);
            await client.PublishAsync(topic, args[1], timeout.Token);
            await foreach (var item in subscription.ReadAllAsync(timeout.Token))
            {
                if (item is LaharsubMessage message)
                {
                    Console.WriteLine($"received {message.MessageId}: {message.GetString()}");
                    return 0;
                }
                Console.Error.WriteLine($"unexpected {item}");
            }
            return 1;
            """);
    }
}
