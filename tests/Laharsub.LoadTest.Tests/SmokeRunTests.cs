using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Text.Json;
using Laharsub.LoadTestClient;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.LoadTest.Tests;

/// <summary>The whole tool, as its command line runs it, against the real server for a few seconds.</summary>
public sealed class SmokeRunTests : IDisposable
{
    private readonly string _out = Directory.CreateTempSubdirectory("laharsub-loadtest-tests-").FullName;

    public void Dispose() => Directory.Delete(_out, recursive: true);

    // The machine running the tests may be busy with other work, so these runs accept up to 1 s of
    // schedule lag; ARunWhoseGeneratorFallsBehindItsScheduleIsMarkedInvalid shows the check biting.

    [Theory]
    [InlineData("json")]
    [InlineData("multipart")]
    public async Task AShortRunDeliversEveryMessageOnceAndWritesItsReport(string format)
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(LoadRuns.Timeout);
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--topics", "4", "--clients-per-topic", "2", "--topics-per-client", "2", "--interval", "0.2",
             "--warmup", "1", "--duration", "3", "--format", format, "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = ReadRun("custom-4t");
        Assert.Equal(8, run.GetProperty("clients").GetInt32());
        var expected = run.GetProperty("deliveriesExpected").GetInt64();
        // 8 clients publishing 5 times a second for 3 s, each message to 4 subscribers (2 clients x 2 topics per poll).
        Assert.InRange(expected, 8 * 5 * 3 * 4 * 0.8, 8 * 5 * 3 * 4 * 1.2);
        Assert.Equal(expected, run.GetProperty("deliveriesReceived").GetInt64());
        var totals = run.GetProperty("totals");
        Assert.Equal(0, totals.GetProperty("lost").GetInt64());
        Assert.Equal(0, totals.GetProperty("duplicates").GetInt64());
        Assert.Equal(expected, run.GetProperty("latency").GetProperty("count").GetInt64());
        Assert.True(File.Exists(Path.Combine(_out, "report.html")) && File.Exists(Path.Combine(_out, "custom-4t.csv")) && File.Exists(Path.Combine(_out, "summary.csv")));
        Assert.Contains("<svg", File.ReadAllText(Path.Combine(_out, "report.html")));
    }

    [Theory]
    [InlineData("longpoll")]
    [InlineData("websocket")]
    public async Task TheLiberatorPresetRunsPatchesConflatedPatchesAndWholeDocumentsAndItsViewsEndExact(string transport)
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(LoadRuns.Timeout);
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--preset", "liberator", "--topics", "5", "--interval", "0.2", "--conflate", "100",
             "--transport", transport, "--warmup", "1", "--duration", "2"],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        var text = output.ToString();
        Assert.True(exit == 0, $"exit code {exit}:\n{text}");
        var suffix = transport == "longpoll" ? "" : "-" + transport;
        foreach (var run in new[] { "liberator-state-5s", "liberator-state-conflate100-5s", "liberator-whole-5s" })
        {
            Assert.Contains($"| {run}{suffix} |", text);
        }
        Assert.Equal(2, text.Split("documents exact 5/5").Length - 1);
    }

    [Theory]
    [InlineData("sse", "http")]
    [InlineData("websocket", "websocket")]
    public async Task AShortRunOverStreamsDeliversEveryMessageOnceAndNamesItsTransport(string transport, string publishVia)
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(LoadRuns.Timeout);
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--transport", transport, "--topics", "4", "--clients-per-topic", "2", "--topics-per-client", "2",
             "--interval", "0.2", "--warmup", "1", "--duration", "3", "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = ReadRun($"custom-4t-{transport}");
        Assert.Equal((transport, publishVia), (run.GetProperty("transport").GetString(), run.GetProperty("publishVia").GetString()));
        // 8 clients publishing 5 times a second for 3 s, each message to 4 subscribers (2 clients x 2 topics per stream).
        LoadRuns.AssertEveryMessageDeliveredOnce(run, 8 * 5 * 3 * 4);
        var totals = run.GetProperty("totals");
        // One stream per client, held for the whole run; no polls.
        Assert.Equal((8L, 0L), (totals.GetProperty("streamsOpened").GetInt64(), totals.GetProperty("polls").GetInt64()));
        // Every accepted publish has its round trip (on the socket: the 'published' answer).
        Assert.True(run.GetProperty("publishRoundTrip").GetProperty("count").GetInt64() >= totals.GetProperty("publishesAccepted").GetInt64());
        Assert.Contains($"custom-4t-{transport},", File.ReadAllText(Path.Combine(_out, "summary.csv")));
        Assert.Contains($"over {transport}", File.ReadAllText(Path.Combine(_out, "report.html")));
    }

    [Fact]
    public async Task ARunCanMixLongPollsIntoStreamsAndSubscribeEveryClientAsAPresenceMember()
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(LoadRuns.Timeout);
        using var joins = new JoinCounter(server);
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--transport", "sse", "--long-poll-percent", "25", "--presence", "--topics", "4", "--clients-per-topic", "2",
             "--interval", "0.2", "--warmup", "1", "--duration", "3", "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = ReadRun("custom-4t-sse");
        Assert.Equal((25, true), (run.GetProperty("longPollPercent").GetInt32(), run.GetProperty("presence").GetBoolean()));
        LoadRuns.AssertEveryMessageDeliveredOnce(run, 8 * 5 * 3 * 2);
        var totals = run.GetProperty("totals");
        // Clients 3 and 7 of 8 long poll; the other six hold one stream each.
        Assert.Equal(6L, totals.GetProperty("streamsOpened").GetInt64());
        Assert.True(totals.GetProperty("polls").GetInt64() > 0, "the long-polling clients answered no poll");
        // Every client became a member of its topic, on either transport, and once only.
        Assert.Equal(8, joins.Count);
        Assert.Contains("25% long polling, every client a presence member", output.ToString());
    }

    [Fact]
    public async Task ARunSpreadOverTwoProcessesMergesTheirResults()
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(LoadRuns.Timeout);
        var tool = Path.Combine(AppContext.BaseDirectory, "Laharsub.LoadTestClient.dll");
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in new[] { tool, "--url", server.BaseAddress.ToString(), "--topics", "3", "--clients-per-topic", "2", "--interval", "0.2",
                     "--warmup", "1", "--duration", "2", "--processes", "2", "--max-schedule-lag", "1000", "--out", _out })
        {
            start.ArgumentList.Add(argument);
        }
        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        try
        {
            await process.WaitForExitAsync().WaitAsync(LoadRuns.Timeout);
        }
        finally
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }
        }

        var log = await stdout.WaitAsync(LoadRuns.Timeout) + await stderr.WaitAsync(LoadRuns.Timeout);
        Assert.True(process.ExitCode == 0, $"exit code {process.ExitCode}:\n{log}");
        var run = ReadRun("custom-3t");
        Assert.Equal(2, run.GetProperty("processes").GetInt32());
        Assert.Equal(6, run.GetProperty("totals").GetProperty("clients").GetInt32());
        var expected = run.GetProperty("deliveriesExpected").GetInt64();
        Assert.True(expected > 0);
        Assert.Equal(expected, run.GetProperty("deliveriesReceived").GetInt64());
        Assert.Equal(expected, run.GetProperty("latency").GetProperty("count").GetInt64());
    }

    [Fact]
    public async Task ARunWhoseGeneratorFallsBehindItsScheduleIsMarkedInvalid()
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(LoadRuns.Timeout);
        using var output = new StringWriter();

        // No generator starts a publish within 10 µs of its due time every time.
        var exit = await LoadTestCommand.RunAsync(
            ["--url", server.BaseAddress.ToString(), "--topics", "2", "--interval", "0.1", "--warmup", "0.5", "--duration", "1",
             "--max-schedule-lag", "0.01", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(LoadRuns.Timeout);

        Assert.Equal(1, exit);
        Assert.Contains("INVALID: the generator fell behind its own schedule", output.ToString());
        Assert.False(ReadRun("custom-2t").GetProperty("valid").GetBoolean());
    }

    /// <summary>Counts one server's <c>laharsub.presence.joins</c>.</summary>
    private sealed class JoinCounter : IDisposable
    {
        private readonly MeterListener _listener = new();
        private long _count;

        public JoinCounter(LaharsubTestServer server)
        {
            var meters = server.Services.GetRequiredService<IMeterFactory>();
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Name == "laharsub.presence.joins" && ReferenceEquals(instrument.Meter.Scope, meters))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref _count, value));
            _listener.Start();
        }

        public long Count => Interlocked.Read(ref _count);

        public void Dispose() => _listener.Dispose();
    }

    private JsonElement ReadRun(string name) => JsonDocument.Parse(File.ReadAllText(Path.Combine(_out, name + ".json"))).RootElement;
}
