using Laharsub.Server.Host.Composition;
using Laharsub.Server.Hosting;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>
/// ASP.NET Core's per-request log category is off by default (while it can log, every request gets an
/// Activity and a log scope, which a waiting poll keeps), the rest of ASP.NET Core logs at Warning, and an
/// operator's own level for either wins.
/// </summary>
public sealed class RequestLoggingTests
{
    [Fact]
    public async Task RequestDiagnosticsAreOffByDefault()
    {
        await using var server = await LaharsubTestServer.StartAsync();

        // The test server has no logging providers, so the rules are what can be observed.
        Assert.Equal([LogLevel.None], RequestDiagnosticsLevels(server));
    }

    [Fact]
    public async Task AnOperatorsLevelForRequestDiagnosticsIsKept()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            [$"Logging:LogLevel:{StandaloneHost.RequestDiagnosticsCategory}"] = "Information",
        });

        Assert.Equal([LogLevel.Information], RequestDiagnosticsLevels(server));
    }

    [Fact]
    public async Task TheFrameworkLogsAtWarningByDefault()
    {
        await using var server = await LaharsubTestServer.StartAsync();

        Assert.Equal([LogLevel.Warning], Levels(server, StandaloneHost.FrameworkCategory));
    }

    [Fact]
    public async Task AnOperatorsLevelForTheFrameworkIsKept()
    {
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            [$"Logging:LogLevel:{StandaloneHost.FrameworkCategory}"] = "Information",
        });

        Assert.Equal([LogLevel.Information], Levels(server, StandaloneHost.FrameworkCategory));
    }

    private static LogLevel?[] RequestDiagnosticsLevels(LaharsubTestServer server) => Levels(server, StandaloneHost.RequestDiagnosticsCategory);

    private static LogLevel?[] Levels(LaharsubTestServer server, string category) =>
        [.. server.Services.GetRequiredService<IOptions<LoggerFilterOptions>>().Value.Rules
            .Where(rule => rule.CategoryName == category)
            .Select(rule => rule.LogLevel)];
}
