namespace Laharsub.GeneratedClients.Tests;

/// <summary>The C# client NSwag (NSwag.ConsoleCore, the manifest's version) generates from the served document.</summary>
public sealed class NSwagClientTests
{
    [Fact]
    public Task NSwagsClientCreatesPublishesPollsPublishesToSeveralTopicsAndReadsPresence() => GeneratedScenario.RunAsync("NSwag",
        ["nswag", "openapi2csclient", "/input:openapi.json", "/output:Client.cs", "/namespace:Generated", "/classname:LaharsubClient"],
        async (server, outcome) =>
        {
            // NSwag's publish takes one media type, the first declared: JSON, so a string is a JSON string.
            await ScenarioChecks.AssertOutcomeAsync(server, outcome, "application/json", "\"hello from NSwag\"");
            Assert.Equal("ApiException 204", outcome.GetProperty("quiet").GetString());
            // Its exceptions' message is the answer's description in the document.
            Assert.StartsWith("Not Found: no such topic", outcome.GetProperty("notFound").GetString(), StringComparison.Ordinal);
            Assert.StartsWith("Bad Request: a parameter or the body is not right", outcome.GetProperty("invalid").GetString(), StringComparison.Ordinal);
        });
}
