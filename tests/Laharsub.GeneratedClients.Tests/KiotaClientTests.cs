namespace Laharsub.GeneratedClients.Tests;

/// <summary>The C# client Kiota (Microsoft.OpenApi.Kiota, the manifest's version) generates from the served document.</summary>
public sealed class KiotaClientTests
{
    [Fact]
    public Task KiotasClientCreatesPublishesPollsPublishesToSeveralTopicsAndReadsPresence() => GeneratedScenario.RunAsync("Kiota",
        ["kiota", "generate", "--language", "CSharp", "--openapi", "openapi.json", "--output", "Generated",
            "--namespace-name", "Generated", "--class-name", "LaharsubClient", "--clean-output", "--log-level", "Warning"],
        async (server, outcome) =>
        {
            await ScenarioChecks.AssertOutcomeAsync(server, outcome, "text/plain", "hello from Kiota");
            Assert.Equal("null", outcome.GetProperty("quiet").GetString());
            // Its exceptions' message is the problem's detail (x-ms-primary-error-message in the document).
            Assert.StartsWith("Topic 999999 does not exist", outcome.GetProperty("notFound").GetString(), StringComparison.Ordinal);
            Assert.StartsWith("label: ", outcome.GetProperty("invalid").GetString(), StringComparison.Ordinal);
        });
}
