using System.Text.Json;
using Laharsub.LoadTestClient;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// The whole tool against the .NET floor (loadtest/Floor), started from its Release build as the tool
/// starts it (--no-build: building the solution makes it), for a few seconds.
/// </summary>
public sealed class FloorRunTests : IDisposable
{
    private readonly string _out = Directory.CreateTempSubdirectory("laharsub-loadtest-floor-tests-").FullName;

    public void Dispose() => Directory.Delete(_out, recursive: true);

    // As in SmokeRunTests: up to 1 s of schedule lag, since the machine running the tests may be busy.

    [Theory]
    [InlineData("longpoll", "http")]
    [InlineData("sse", "http")]
    [InlineData("websocket", "websocket")]
    public async Task AShortRunAgainstTheFloorDeliversEveryMessageOnce(string transport, string publishVia)
    {
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--target", "floor", "--no-build", "--transport", transport, "--topics", "4", "--clients-per-topic", "2", "--topics-per-client", "2",
             "--interval", "0.2", "--warmup", "1", "--duration", "3", "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = ReadRun(transport == "longpoll" ? "custom-4t-floor" : $"custom-4t-{transport}-floor");
        Assert.Equal(("floor", transport, publishVia),
            (run.GetProperty("target").GetString(), run.GetProperty("transport").GetString(), run.GetProperty("publishVia").GetString()));
        Assert.Contains("loadtest/Floor/bin/Release/net10.0/Laharsub.Floor.dll", run.GetProperty("serverCommand").GetString());
        // 8 clients publishing 5 times a second for 3 s, each message to 4 subscribers (2 clients x 2 topics per client).
        LoadRuns.AssertEveryMessageDeliveredOnce(run, 8 * 5 * 3 * 4);
        // Streams: one per client, held for the whole run (the floor never ends one early).
        Assert.Equal(transport == "longpoll" ? 0 : 8, run.GetProperty("totals").GetProperty("streamsOpened").GetInt64());
    }

    [Fact]
    public async Task ComparingLaharsubWithTheFloorPinsBothToTheGivenCoreAndPrintsTheirRatio()
    {
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--compare", "laharsub,floor", "--no-build", "--server-cpus", "0", "--topics", "3", "--interval", "0.2", "--warmup", "1", "--duration", "2",
             "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        Assert.Contains("laharsub/floor", output.ToString());
        foreach (var name in new[] { "custom-3t-laharsub", "custom-3t-floor" })
        {
            var run = ReadRun(name);
            Assert.StartsWith("taskset -c 0 dotnet ", run.GetProperty("serverCommand").GetString());
            Assert.True(run.GetProperty("deliveriesExpected").GetInt64() > 0);
            Assert.Equal(run.GetProperty("deliveriesExpected").GetInt64(), run.GetProperty("deliveriesReceived").GetInt64());
        }
    }

    private JsonElement ReadRun(string name) => JsonDocument.Parse(File.ReadAllText(Path.Combine(_out, name + ".json"))).RootElement;
}
