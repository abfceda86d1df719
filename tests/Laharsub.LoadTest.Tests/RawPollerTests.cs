using System.Text;
using System.Threading.Channels;
using Laharsub.LoadTestClient.Load;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.LoadTest.Tests;

/// <summary>The generator's raw HTTP/1.1 long poll against the real server: framing, keep-alive and reconnecting.</summary>
public sealed class RawPollerTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(10);

    [Theory]
    [InlineData("json")]
    [InlineData("multipart")]
    public async Task ResponsesReadOneByteAtATimeArriveWholeAndAllPollsShareOneConnection(string formatName)
    {
        var format = formatName == "json" ? WireFormatKind.Json : WireFormatKind.Multipart;
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(Timeout);
        var topic = (await LoadRuns.CreateTopicsAsync(server.BaseAddress, 1))[0];
        using var http = new LoadHttp(maxConnections: 2, sourceAddressCount: 4);
        var accept = format == WireFormatKind.Json ? "application/json" : "multipart/mixed";
        var poller = new RawPoller(http, new Uri(server.ApiAddress, "subscriptions"), accept, maxBytesPerReceive: 1);
        var client = new RecordingClient(http, topic, pollTimeoutSeconds: 30, format);
        using var stop = new CancellationTokenSource();
        var running = poller.RunAsync(client, stop.Token);
        using var publisher = server.CreateClient(Timeout);

        for (var id = 1L; id <= 3; id++)
        {
            var body = $"message {id} " + new string('x', 300 * (int)id);
            (await publisher.PostAsync($"topics/{topic}", new StringContent(body)).WaitAsync(Timeout)).EnsureSuccessStatusCode();
            var response = await client.Responses.ReadAsync().AsTask().WaitAsync(Timeout);

            Assert.Equal(200, response.Status);
            Assert.Equal([(topic, id, body)], response.Messages);
        }

        Assert.Equal(1, poller.Connects);
        Assert.Equal(0, client.Errors);
        await stop.CancelAsync();
        await running.WaitAsync(Timeout);
        Assert.Equal(0, http.OpenConnections);
        Assert.True(http.BytesReceived > 3 * 300, $"received {http.BytesReceived} bytes");
    }

    [Fact]
    public async Task APollThatTimesOutIsA204WithoutBodyAndTheNextPollReusesTheConnection()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock)).WaitAsync(Timeout);
        var topic = (await LoadRuns.CreateTopicsAsync(server.BaseAddress, 1))[0];
        using var http = new LoadHttp(maxConnections: 2, sourceAddressCount: 4);
        var poller = new RawPoller(http, new Uri(server.ApiAddress, "subscriptions"), "application/json");
        var client = new RecordingClient(http, topic, pollTimeoutSeconds: 1);
        using var stop = new CancellationTokenSource();
        var running = poller.RunAsync(client, stop.Token);

        for (var i = 0; i < 2; i++)
        {
            await TimeOutTheWaitingPollAsync(server, clock, topic, client);
            var response = await client.Responses.ReadAsync().AsTask().WaitAsync(Timeout);
            Assert.Equal(204, response.Status);
            Assert.Empty(response.Body);
        }

        Assert.Equal(1, poller.Connects);
        await stop.CancelAsync();
        await running.WaitAsync(Timeout);
    }

    [Fact]
    public async Task AServerThatClosesTheConnectionIsReconnectedToAndPollingResumes()
    {
        var first = await LaharsubTestServer.StartAsync().WaitAsync(Timeout);
        var keepData = LaharsubTestServer.KeepData(first);
        var port = first.BaseAddress.Port;
        var topic = (await LoadRuns.CreateTopicsAsync(first.BaseAddress, 1))[0];
        using var http = new LoadHttp(maxConnections: 2, sourceAddressCount: 4);
        var poller = new RawPoller(http, new Uri(first.ApiAddress, "subscriptions"), "application/json");
        var client = new RecordingClient(http, topic, pollTimeoutSeconds: 30);
        using var stop = new CancellationTokenSource();
        var running = poller.RunAsync(client, stop.Token);
        await Eventually.HoldsAsync(() => Task.FromResult(Volatile.Read(ref http.PollsWaiting) == 1), Timeout, "the poll waits");

        // A stopping server answers a waiting poll 204 with Connection: close (or, if the poll had not
        // reached it yet, just closes the connection).
        await first.DisposeAsync();
        await using var second = await LaharsubTestServer.StartAsync(services: keepData, port: port).WaitAsync(Timeout);
        using var publisher = second.CreateClient(Timeout);
        (await publisher.PostAsync($"topics/{topic}", new StringContent("after the restart")).WaitAsync(Timeout)).EnsureSuccessStatusCode();

        RawResponse response;
        while ((response = await client.Responses.ReadAsync().AsTask().WaitAsync(Timeout)).Status != 200)
        {
            Assert.Equal(204, response.Status);
            Assert.Equal(0, response.OpenConnections);
        }
        Assert.Contains("after the restart", Encoding.UTF8.GetString(response.Body));
        // At least one new connection. There can be more: a connect made while the first server shuts
        // down may still be accepted into its listen backlog and then reset, which costs one retry.
        Assert.True(poller.Connects >= 2, $"the poller connected {poller.Connects} time(s); expected a reconnect after the restart");
        await stop.CancelAsync();
        await running.WaitAsync(Timeout);
        Assert.Equal(0, http.OpenConnections);
    }

    [Fact]
    public async Task AnAnswerWithConnectionCloseClosesTheConnectionAndTheNextPollOpensANewOne()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock)).WaitAsync(Timeout);
        var topic = (await LoadRuns.CreateTopicsAsync(server.BaseAddress, 1))[0];
        using var http = new LoadHttp(maxConnections: 2, sourceAddressCount: 4);
        var poller = new RawPoller(http, new Uri(server.ApiAddress, "subscriptions"), "application/json");
        // Kestrel answers a malformed request line 400 with Connection: close and closes.
        var client = new RecordingClient(http, topic, pollTimeoutSeconds: 1) { MalformedPolls = 1 };
        using var stop = new CancellationTokenSource();
        var running = poller.RunAsync(client, stop.Token);

        var refused = await client.Responses.ReadAsync().AsTask().WaitAsync(Timeout);
        Assert.Equal(400, refused.Status);
        Assert.Equal(0, refused.OpenConnections);
        await TimeOutTheWaitingPollAsync(server, clock, topic, client);
        var next = await client.Responses.ReadAsync().AsTask().WaitAsync(Timeout);
        Assert.Equal(204, next.Status);
        Assert.Equal(1, next.OpenConnections);
        Assert.Equal(2, poller.Connects);
        Assert.Equal(0, client.Errors);
        await stop.CancelAsync();
        await running.WaitAsync(Timeout);
    }

    /// <summary>Once the next poll waits on the server, moves the server's clock past its 1 s timeout.</summary>
    private static async Task TimeOutTheWaitingPollAsync(LaharsubTestServer server, FakeTimeProvider clock, long topic, RecordingClient client)
    {
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), Timeout, "the next poll waits");
        // A poll counts as waiting a moment before its timeout's timer exists, so one step of the clock may come
        // too early: step until its answer is there.
        await clock.AdvanceUntilAsync(() => Task.FromResult(client.Responses.TryPeek(out _)), TimeSpan.FromSeconds(1), "the poll timed out");
    }

    private sealed record RawResponse(int Status, byte[] Body, List<(long Topic, long Id, string Body)> Messages, int OpenConnections);

    /// <summary>
    /// Polls one topic, reads each response as the load generator does (moving its cursor past what it
    /// got), and hands every response to the test.
    /// </summary>
    private sealed class RecordingClient(LoadHttp http, long topic, int pollTimeoutSeconds, WireFormatKind format = WireFormatKind.Json) : IRawPollHandler
    {
        private readonly Channel<RawResponse> _responses = Channel.CreateUnbounded<RawResponse>();
        private long _from = 1;
        private int _errors;

        public ChannelReader<RawResponse> Responses => _responses.Reader;

        public int Errors => Volatile.Read(ref _errors);

        /// <summary>How many of the first polls carry a control character in their query (a malformed request line).</summary>
        public int MalformedPolls { get; set; }

        public bool TryWriteQuery(Span<byte> destination, out int written)
        {
            var malformed = MalformedPolls-- > 0 ? "\u0001" : "";
            return Encoding.ASCII.TryGetBytes($"timeout={pollTimeoutSeconds}{malformed}&topics={topic}:{_from}", destination, out written);
        }

        public bool OnResponse(in RawPollResponse response)
        {
            var status = response.Status;
            var contentType = response.ContentType;
            var body = response.Body;
            var sink = new RecordingSink();
            if (status == 200 && format == WireFormatKind.Json)
            {
                var scratch = new byte[16];
                PollResponseReader.ReadJson(body, sink, ref scratch);
            }
            else if (status == 200)
            {
                PollResponseReader.ReadMultipart(body, PollResponseReader.BoundaryOf(contentType), sink);
            }
            if (sink.Messages.Count > 0)
            {
                _from = sink.Messages[^1].Id + 1;
            }
            _responses.Writer.TryWrite(new RawResponse(status, body.ToArray(), sink.Messages, http.OpenConnections));
            return true;
        }

        public void OnError(Exception exception) => Interlocked.Increment(ref _errors);
    }

    private sealed class RecordingSink : IPollResponseSink
    {
        public List<(long Topic, long Id, string Body)> Messages { get; } = [];

        public void OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body) =>
            Messages.Add((topicId, messageId, Encoding.UTF8.GetString(body)));

        public void OnGap(long topicId, long fromMessageId, long toMessageId) => throw new InvalidOperationException("unexpected gap");

        public void OnReset(long topicId, long firstMessageId, bool epochChanged) => throw new InvalidOperationException("unexpected reset");

        public void OnTopicDeleted(long topicId) => throw new InvalidOperationException("unexpected topicDeleted");
    }
}
