using System.Diagnostics;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;
using Laharsub.LoadTestClient;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.LoadTestClient.Load;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// The generator against a real nginx + nchan started from loadtest/peers/nchan.conf. These tests need
/// Debian's nginx-light and libnginx-mod-nchan (test.sh installs them); without them they fail saying so.
/// </summary>
public sealed class NchanRunTests : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);
    private readonly string _out = Directory.CreateTempSubdirectory("laharsub-loadtest-nchan-tests-").FullName;

    public void Dispose() => Directory.Delete(_out, recursive: true);

    [Fact]
    public async Task PollsFollowTheCursorThroughEveryMessageAndAWaitedOutPollKeepsItsConnection()
    {
        await using var nchan = await StartNchanAsync(pollTimeoutSeconds: 1, workerProcesses: 1);
        var plan = LoadRuns.Plan(nchan.BaseAddress, [1]) with { ApiAddress = nchan.BaseAddress, Target = TargetKind.Nchan, ChannelPrefix = $"test{Guid.NewGuid():N}-" };
        var protocol = TargetProtocol.For(plan);
        using var http = new LoadHttp(maxConnections: 2, sourceAddressCount: 4);
        var handler = new RecordingHandler(protocol.CreatePollWire([new Laharsub.LoadTestClient.Measurement.DeliveryVerifier(1, consecutiveIds: false)]));
        // One byte per read: the head (and its Last-Modified and Etag) must still be read whole.
        var poller = new RawPoller(http, protocol.PollAddressAt(plan.ApiAddress), handler.Accept, maxBytesPerReceive: 1);
        using var publisher = new HttpClient { BaseAddress = nchan.BaseAddress, Timeout = Timeout };
        // Two messages before the first poll: nchan gives the oldest first, then the next, one per answer.
        await PublishAsync(publisher, protocol.PublishPath(1), "one");
        await PublishAsync(publisher, protocol.PublishPath(1), "two");
        using var stop = new CancellationTokenSource();
        var running = poller.RunAsync(handler, stop.Token);

        Assert.Equal((200, "one"), await handler.Answers.ReadAsync().AsTask().WaitAsync(Timeout));
        Assert.Equal((200, "two"), await handler.Answers.ReadAsync().AsTask().WaitAsync(Timeout));
        await PublishAsync(publisher, protocol.PublishPath(1), "three");
        Assert.Equal((200, "three"), await handler.Answers.ReadAsync().AsTask().WaitAsync(Timeout));
        // Nothing more: nchan_subscriber_timeout (1 s here) ends the poll with an empty 408.
        Assert.Equal((408, ""), await handler.Answers.ReadAsync().AsTask().WaitAsync(Timeout));
        await PublishAsync(publisher, protocol.PublishPath(1), "four");
        // On a slow machine the next 1 s poll may time out too before the publish lands: skip those, for
        // a bounded time (a clean-clone CI run once waited 85 minutes here, one 408 a second).
        var deadline = Stopwatch.StartNew();
        (int, string) answer;
        while ((answer = await handler.Answers.ReadAsync().AsTask().WaitAsync(Timeout)) == (408, ""))
        {
            Assert.True(deadline.Elapsed < Timeout, $"nchan answered only 408s for {Timeout.TotalSeconds:0} s after 'four' was published: the poll's cursor lost it");
        }
        Assert.Equal((200, "four"), answer);

        Assert.Equal(1, poller.Connects);
        Assert.Equal(0, handler.Errors);
        Assert.Equal(4, handler.Ids.Count);
        Assert.Equal(handler.Ids.Order(), handler.Ids);
        await stop.CancelAsync();
        await running.WaitAsync(Timeout);
    }

    [Fact]
    public async Task AShortRunAgainstNchanDeliversEveryMessageOnceAndSamplesItsWorkers()
    {
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--target", "nchan", "--topics", "4", "--clients-per-topic", "2", "--interval", "0.2", "--warmup", "1", "--duration", "3",
             "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = ReadRun("custom-4t-nchan");
        Assert.Equal("nchan", run.GetProperty("target").GetString());
        var expected = run.GetProperty("deliveriesExpected").GetInt64();
        // 8 clients publishing 5 times a second for 3 s, each message to 2 subscribers.
        Assert.InRange(expected, 8 * 5 * 3 * 2 * 0.8, 8 * 5 * 3 * 2 * 1.2);
        Assert.Equal(expected, run.GetProperty("deliveriesReceived").GetInt64());
        var totals = run.GetProperty("totals");
        Assert.Equal(0, totals.GetProperty("duplicates").GetInt64());
        Assert.Equal(0, totals.GetProperty("transportErrors").GetInt64());
        Assert.Empty(totals.GetProperty("httpErrors").EnumerateObject());
        // nginx's master and its workers (one per core) are all sampled.
        Assert.True(run.GetProperty("server").GetProperty("processes").GetInt32() >= 2, run.GetProperty("server").ToString());
    }

    [Fact]
    public async Task APinnedRunStartsNginxUnderTasksetWithOneWorkerPerCoreAndCountsMemoryPerConnection()
    {
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--target", "nchan", "--transport", "sse", "--topics", "4", "--clients-per-topic", "2", "--interval", "0.2", "--warmup", "1", "--duration", "3",
             "--max-schedule-lag", "1000", "--server-cpus", "0", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = ReadRun("custom-4t-sse-nchan");
        Assert.StartsWith("taskset -c 0 ", run.GetProperty("serverCommand").GetString());
        var server = run.GetProperty("server");
        // The master and the one worker that one core gets.
        Assert.Equal(2, server.GetProperty("processes").GetInt32());
        Assert.True(server.GetProperty("idleRssMiB").GetDouble() > 0, server.ToString());
        Assert.Equal(JsonValueKind.Number, server.GetProperty("memoryPerConnectionKiB").ValueKind);
    }

    [Theory]
    [InlineData("sse")]
    [InlineData("websocket")]
    public async Task AShortRunOfStreamsAgainstNchanDeliversEveryMessageOnceAndHoldsEachStream(string transport)
    {
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--target", "nchan", "--transport", transport, "--topics", "4", "--clients-per-topic", "2", "--interval", "0.2", "--warmup", "1",
             "--duration", "3", "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var run = ReadRun($"custom-4t-{transport}-nchan");
        // nchan takes publishes with POST /pub on every transport.
        Assert.Equal(("nchan", transport, "http"), (run.GetProperty("target").GetString(), run.GetProperty("transport").GetString(), run.GetProperty("publishVia").GetString()));
        var expected = run.GetProperty("deliveriesExpected").GetInt64();
        // 8 clients publishing 5 times a second for 3 s, each message to 2 subscribers.
        Assert.InRange(expected, 8 * 5 * 3 * 2 * 0.8, 8 * 5 * 3 * 2 * 1.2);
        Assert.Equal(expected, run.GetProperty("deliveriesReceived").GetInt64());
        Assert.Equal(expected, run.GetProperty("latency").GetProperty("count").GetInt64());
        var totals = run.GetProperty("totals");
        Assert.Equal(0, totals.GetProperty("duplicates").GetInt64());
        Assert.Equal(0, totals.GetProperty("transportErrors").GetInt64());
        Assert.Empty(totals.GetProperty("httpErrors").EnumerateObject());
        // Each stream held for the whole run: none ended by nchan and reopened.
        Assert.Equal(8, totals.GetProperty("streamsOpened").GetInt64());
        Assert.Contains("nchan_subscriber_timeout 0s", run.GetProperty("serverCommand").GetString());
    }

    [Theory]
    [InlineData(null)]
    [InlineData("sse")]
    public async Task CompareRunsBothTargetsOneAfterTheOtherAndPrintsTheirRatios(string? transport)
    {
        using var output = new StringWriter();
        string[] transportOption = transport is null ? [] : ["--transport", transport];
        var suffix = transport is null ? "" : "-" + transport;

        var exit = await LoadTestCommand.RunAsync(
            ["--compare", "laharsub,nchan", "--no-build", "--topics", "3", "--interval", "0.2", "--warmup", "1", "--duration", "2",
             "--max-schedule-lag", "1000", "--out", _out, .. transportOption],
            output, output, CancellationToken.None).WaitAsync(Timeout);

        Assert.True(exit == 0, $"exit code {exit}:\n{output}");
        var text = output.ToString();
        Assert.True(text.IndexOf($"== custom-3t{suffix}-laharsub", StringComparison.Ordinal) < text.IndexOf($"== custom-3t{suffix}-nchan", StringComparison.Ordinal), text);
        Assert.Contains("laharsub/nchan", text);
        Assert.Contains("server CPU per delivery (µs)", text);
        foreach (var name in new[] { $"custom-3t{suffix}-laharsub", $"custom-3t{suffix}-nchan" })
        {
            var run = ReadRun(name);
            Assert.Equal(transport ?? "longpoll", run.GetProperty("transport").GetString());
            Assert.True(run.GetProperty("deliveriesExpected").GetInt64() > 0);
            Assert.Equal(run.GetProperty("deliveriesExpected").GetInt64(), run.GetProperty("deliveriesReceived").GetInt64());
        }
    }

    [Fact]
    public async Task FindMaxRunsStepsAtRisingRatesAndReportsTheHighestThatHeld()
    {
        using var output = new StringWriter();

        var exit = await LoadTestCommand.RunAsync(
            ["--target", "nchan", "--find-max", "--find-max-steps", "2", "--find-max-factor", "2", "--topics", "2", "--interval", "0.2",
             "--warmup", "0.5", "--duration", "1.5", "--max-schedule-lag", "1000", "--out", _out],
            output, output, CancellationToken.None).WaitAsync(Timeout);

        var text = output.ToString();
        Assert.True(exit == 0, $"exit code {exit}:\n{text}");
        Assert.Contains("== find-max", text);
        Assert.Contains("custom-2t: highest sustained deliveries/s:", text);
        var first = ReadRun("custom-max0-2t-nchan");
        Assert.Equal(0, first.GetProperty("search").GetProperty("step").GetInt32());
        Assert.Equal(20, first.GetProperty("targetPublishesPerSecond").GetDouble(), 3);
        if (first.GetProperty("search").GetProperty("holds").GetBoolean())
        {
            // The next step doubles the rate: 4 clients every 0.1 s.
            Assert.Equal(40, ReadRun("custom-max1-2t-nchan").GetProperty("targetPublishesPerSecond").GetDouble(), 3);
        }
    }

    internal static async Task<NchanProcess> StartNchanAsync(int pollTimeoutSeconds, int? workerProcesses = null)
    {
        var repository = ServerProcess.FindRepositoryRoot() ?? throw new InvalidOperationException("Laharsub.sln not found above the test's directory.");
        // Not disposed: nginx may still write to it from another thread after the test.
        var log = new StringWriter();
        try
        {
            return await NchanProcess.StartAsync(repository, pollTimeoutSeconds, TextWriter.Synchronized(log), CancellationToken.None, workerProcesses)
                .WaitAsync(Timeout);
        }
        catch (Exception exception) when (exception is InvalidOperationException or TimeoutException)
        {
            throw new InvalidOperationException($"nginx with nchan could not start: {exception.Message}\n{log}", exception);
        }
    }

    private static async Task PublishAsync(HttpClient client, string path, string body)
    {
        using var response = await client.PostAsync(path, new StringContent(body)).WaitAsync(Timeout);
        Assert.True((int)response.StatusCode is 201 or 202, $"publish answered {(int)response.StatusCode}");
    }

    private JsonElement ReadRun(string name) => JsonDocument.Parse(File.ReadAllText(Path.Combine(_out, name + ".json"))).RootElement;

    /// <summary>Polls through the nchan wire and hands each answer (status, body) to the test.</summary>
    private sealed class RecordingHandler(IPollWire wire) : IRawPollHandler, IPollResponseSink
    {
        private readonly Channel<(int, string)> _answers = Channel.CreateUnbounded<(int, string)>();
        private int _errors;

        public string Accept => wire.Accept;
        public ChannelReader<(int, string)> Answers => _answers.Reader;
        public List<long> Ids { get; } = [];
        public int Errors => Volatile.Read(ref _errors);

        public bool TryWriteQuery(Span<byte> destination, out int written) => wire.TryWriteQuery(destination, out written);

        public bool TryWriteHeaders(Span<byte> destination, out int written) => wire.TryWriteHeaders(destination, out written);

        public bool OnResponse(in RawPollResponse response)
        {
            if (response.Status == 200)
            {
                wire.Read(response, this);
            }
            _answers.Writer.TryWrite((response.Status, Encoding.ASCII.GetString(response.Body)));
            return true;
        }

        public void OnError(Exception exception) => Interlocked.Increment(ref _errors);

        public void OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body) => Ids.Add(messageId);

        public void OnGap(long topicId, long fromMessageId, long toMessageId) => throw new InvalidOperationException("nchan sends no gap notices");

        public void OnReset(long topicId, long firstMessageId, bool epochChanged) => throw new InvalidOperationException("nchan sends no resets");

        public void OnTopicDeleted(long topicId) => throw new InvalidOperationException("nchan sends no deletion notices");
    }
}
