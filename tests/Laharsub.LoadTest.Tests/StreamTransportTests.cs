using System.Net.Http.Headers;
using System.Text;
using System.Text.Json;
using System.Threading.Channels;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;
using Laharsub.Testing;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// --transport sse and websocket: the stream reader's framing (chunked or not, events cut anywhere),
/// and streams that break resuming where they left off, against the real Laharsub server and nchan.
/// </summary>
public sealed class StreamTransportTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public void ChunksAreDecodedInPlaceHoweverTheReadsCutThem()
    {
        var raw = "4\r\nWiki\r\n5;name=value\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n"u8.ToArray();
        for (var cut = 1; cut <= raw.Length; cut++)
        {
            var buffer = raw.ToArray();
            var decoder = new ChunkedDecoder();
            var decoded = 0;
            for (var at = 0; at < raw.Length; at += cut)
            {
                decoded = decoder.Decode(buffer, decoded, at, Math.Min(raw.Length, at + cut));
            }

            Assert.Equal("Wikipedia in\r\n\r\nchunks.", Encoding.ASCII.GetString(buffer, 0, decoded));
            Assert.True(decoder.Ended, $"reads of {cut} bytes");
        }
    }

    [Theory]
    [InlineData("zz\r\nab\r\n")]
    [InlineData("2\r\nabc\r\n")]
    [InlineData("123456789\r\n")]
    public void BrokenChunkFramingIsRefused(string raw)
    {
        var buffer = Encoding.ASCII.GetBytes(raw);
        var decoder = new ChunkedDecoder();

        Assert.Throws<FormatException>(() => decoder.Decode(buffer, 0, 0, buffer.Length));
    }

    [Fact]
    public void EventsAreReadWholeWithTheirDataLinesJoinedAndCommentsSkipped()
    {
        var text = ": hi\n\nretry: 2000\n\nevent: subscribed\nid: 1:1~e\ndata:{}\n\nid: 7:3\ndata: a\rb\ndata: \ndata:  c\n\nid: 8:1\ndata: incomplete"u8;
        var scratch = new byte[2];
        var events = new List<(string Type, string Id, string Data, bool HasData)>();
        var at = 0;
        int length;
        while ((length = EventStreamParser.TryRead(text[at..], ref scratch, out var sse)) > 0)
        {
            at += length;
            events.Add((Encoding.ASCII.GetString(sse.Type), Encoding.ASCII.GetString(sse.Id), Encoding.ASCII.GetString(sse.Data), sse.HasData));
        }

        Assert.Equal(
            [("", "", "", false), ("", "", "", false), ("subscribed", "1:1~e", "{}", true), ("", "7:3", "a\rb\n\n c", true)],
            events);
        // The last event has no end yet: it waits for more bytes.
        Assert.Equal("id: 8:1\ndata: incomplete", Encoding.ASCII.GetString(text[at..]));
    }

    [Fact]
    public void APublishFrameCarriesTheBodyAsBase64AndItsSequenceAsItsId()
    {
        var wire = new LaharsubProtocol(LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [7])).CreateWebSocketWire([new DeliveryVerifier(7)]);
        byte[] body = [0, 1, 10, 13, 255, 34, 92];
        var frame = new byte[16];

        Assert.False(wire.TryWritePublish(frame, 42, 7, body, out _));
        frame = new byte[512];
        Assert.True(wire.TryWritePublish(frame, 42, 7, body, out var written));

        var json = JsonDocument.Parse(frame.AsMemory(0, written)).RootElement;
        Assert.Equal(("publish", "42", 7L, "base64", "application/octet-stream"),
            (json.GetProperty("type").GetString(), json.GetProperty("id").GetString(), json.GetProperty("topicId").GetInt64(),
             json.GetProperty("encoding").GetString(), json.GetProperty("contentType").GetString()));
        Assert.Equal(body, Convert.FromBase64String(json.GetProperty("body").GetString()!));
        Assert.Equal("ws://127.0.0.1:9/ps/subscriptions?topics=7:1", wire.Address(new Uri("http://127.0.0.1:9/ps/subscriptions")).ToString());
    }

    [Fact]
    public async Task LaharsubEventsReadOneByteAtATimeArriveWholeFromTheChunkedStream()
    {
        await using var server = await LaharsubTestServer.StartAsync().WaitAsync(Timeout);
        var topic = (await LoadRuns.CreateTopicsAsync(server.BaseAddress, 1))[0];
        var plan = LoadRuns.Plan(server.BaseAddress, [topic]) with { Transport = TransportKind.Sse };
        var protocol = TargetProtocol.For(plan);
        using var http = new LoadHttp(maxConnections: 2, sourceAddressCount: 4);
        var handler = new RecordingHandler(protocol.CreateEventStreamWire([new DeliveryVerifier(topic)]));
        var stream = new RawEventStream(http, protocol.PollAddressAt(plan.ApiAddress), maxBytesPerReceive: 1);
        using var stop = new CancellationTokenSource();
        var running = stream.RunAsync(handler, stop.Token);
        await Eventually.HoldsAsync(() => Task.FromResult(Volatile.Read(ref http.PollsWaiting) == 1), Timeout, "the stream is open");
        using var publisher = server.CreateClient(Timeout);
        string[] bodies = ["one", "two " + new string('x', 600), "three \"quoted\" \\ and \u00e9"];
        foreach (var body in bodies)
        {
            (await publisher.PostAsync($"topics/{topic}", new StringContent(body)).WaitAsync(Timeout)).EnsureSuccessStatusCode();
        }

        for (var id = 1; id <= bodies.Length; id++)
        {
            Assert.Equal((topic, (long)id, bodies[id - 1]), await handler.Messages.ReadAsync().AsTask().WaitAsync(Timeout));
        }
        Assert.Equal((1, 0, 1L), (stream.Connects, handler.Errors, Volatile.Read(ref http.StreamsOpened)));
        await stop.CancelAsync();
        await running.WaitAsync(Timeout);
        Assert.Equal((0, 0), (http.OpenConnections, Volatile.Read(ref http.PollsWaiting)));
    }

    [Fact]
    public async Task NchanEventsReadOneByteAtATimeKeepEveryByteOfTheirBodies()
    {
        await using var nchan = await NchanRunTests.StartNchanAsync(pollTimeoutSeconds: 0, workerProcesses: 1);
        var plan = LoadRuns.Plan(nchan.BaseAddress, [1]) with
        {
            ApiAddress = nchan.BaseAddress, Target = TargetKind.Nchan, Transport = TransportKind.Sse, ChannelPrefix = $"test{Guid.NewGuid():N}-",
        };
        var protocol = TargetProtocol.For(plan);
        using var http = new LoadHttp(maxConnections: 2, sourceAddressCount: 4);
        var handler = new RecordingHandler(protocol.CreateEventStreamWire([new DeliveryVerifier(1, consecutiveIds: false)]));
        var stream = new RawEventStream(http, protocol.PollAddressAt(plan.ApiAddress), maxBytesPerReceive: 1);
        using var publisher = new HttpClient { BaseAddress = nchan.BaseAddress, Timeout = Timeout };
        // Bodies that nchan writes as several data: lines (LF), with CRs that are the body's own.
        string[] bodies = ["plain", "two\nlines", "a\rb\r\nc", "ends with a newline\n", "\n\nstarts with two"];
        foreach (var body in bodies)
        {
            using var content = new ByteArrayContent(Encoding.ASCII.GetBytes(body));
            content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
            using var response = await publisher.PostAsync(protocol.PublishPath(1), content).WaitAsync(Timeout);
            Assert.True((int)response.StatusCode is 201 or 202, $"publish answered {(int)response.StatusCode}");
        }
        using var stop = new CancellationTokenSource();
        var running = stream.RunAsync(handler, stop.Token);

        long last = 0;
        foreach (var body in bodies)
        {
            var (_, id, received) = await handler.Messages.ReadAsync().AsTask().WaitAsync(Timeout);
            Assert.Equal(body, received);
            Assert.True(id > last, $"id {id} after {last}");
            last = id;
        }
        Assert.Equal((1, 0), (stream.Connects, handler.Errors));
        await stop.CancelAsync();
        await running.WaitAsync(Timeout);
    }

    [Theory]
    [InlineData("laharsub", "sse")]
    [InlineData("laharsub", "websocket")]
    [InlineData("nchan", "sse")]
    [InlineData("nchan", "websocket")]
    public async Task AStreamThatIsCutOffResumesWhereItLeftOffWithNothingLostOrRepeated(string targetName, string transportName)
    {
        var target = targetName == "nchan" ? TargetKind.Nchan : TargetKind.Laharsub;
        var transport = transportName == "sse" ? TransportKind.Sse : TransportKind.WebSocket;
        await using var laharsub = target == TargetKind.Laharsub ? await LaharsubTestServer.StartAsync().WaitAsync(Timeout) : null;
        await using var nchan = target == TargetKind.Nchan ? await NchanRunTests.StartNchanAsync(pollTimeoutSeconds: 0, workerProcesses: 1) : null;
        var serverRoot = laharsub?.BaseAddress ?? nchan!.BaseAddress;
        // The subscription goes through the proxy, which can cut it; publishes go straight to the server.
        await using var proxy = new DelayingProxy(serverRoot, TimeSpan.Zero);
        var topic = laharsub is null ? 1 : (await LoadRuns.CreateTopicsAsync(serverRoot, 1))[0];
        var plan = LoadRuns.Plan(proxy.BaseAddress, [topic]) with { ClientsPerTopic = 1, Target = target, Transport = transport };
        if (target == TargetKind.Nchan)
        {
            plan = plan with { ApiAddress = proxy.BaseAddress, ChannelPrefix = $"test{Guid.NewGuid():N}-" };
        }
        using var engine = new LoadEngine(plan);
        using var stop = new CancellationTokenSource();
        var loops = await engine.ConnectAsync(Timeout, stop.Token);
        using var publisher = new HttpClient { BaseAddress = target == TargetKind.Nchan ? serverRoot : new Uri(serverRoot, "ps/"), Timeout = Timeout };

        await PublishStampedAsync(publisher, engine.Protocol.PublishPath(topic), 3);
        await Eventually.HoldsAsync(() => Task.FromResult(engine.DeliveriesTotal == 3), Timeout, "the first 3 messages arrive");
        proxy.DropConnections();
        // Published while the stream is down (it reconnects after a pause): only a resume can bring them.
        await PublishStampedAsync(publisher, engine.Protocol.PublishPath(topic), 3);
        await Eventually.HoldsAsync(() => Task.FromResult(engine.DeliveriesTotal >= 6), Timeout, $"all 6 messages arrive (got {engine.DeliveriesTotal})");
        // Whatever a resume from the wrong place would repeat has arrived by now too.
        await Task.Delay(300);

        Assert.Equal(6, engine.DeliveriesTotal);
        Assert.Equal((0L, 0L), (engine.Counters.Lost, engine.Counters.Duplicates));
        Assert.True(engine.StreamsOpened >= 2, $"the stream opened {engine.StreamsOpened} time(s); expected a reconnect after the cut");
        Assert.True(proxy.Accepted >= 2, $"{proxy.Accepted} connection(s) through the proxy");
        if (target == TargetKind.Laharsub)
        {
            Assert.Equal(7, engine.Clients[0].Topics[0].Next);
        }
        await stop.CancelAsync();
        await Task.WhenAll(loops).WaitAsync(Timeout);
    }

    [Fact]
    public void EachTransportGivesTheClientItsSubscriberAndOnlyALaharsubSocketCarriesPublishes()
    {
        var root = new Uri("http://127.0.0.1:9/");
        using var polls = new LoadEngine(LoadRuns.Plan(root, [1]));
        using var sse = new LoadEngine(LoadRuns.Plan(root, [1]) with { Transport = TransportKind.Sse });
        using var socket = new LoadEngine(LoadRuns.Plan(root, [1]) with { Transport = TransportKind.WebSocket });
        using var nchanSocket = new LoadEngine(LoadRuns.Plan(root, [1]) with { ApiAddress = root, Target = TargetKind.Nchan, Transport = TransportKind.WebSocket });

        Assert.Null(polls.Clients[0].PublishSocket);
        Assert.Null(sse.Clients[0].PublishSocket);
        Assert.NotNull(socket.Clients[0].PublishSocket);
        Assert.Null(nchanSocket.Clients[0].PublishSocket);
    }

    private static async Task PublishStampedAsync(HttpClient publisher, string path, int count)
    {
        for (var i = 0; i < count; i++)
        {
            var body = new byte[MessageStamp.Size];
            var now = MonotonicClock.NowMicroseconds;
            MessageStamp.Write(body, now, now);
            using var content = new ByteArrayContent(body);
            content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");
            using var response = await publisher.PostAsync(path, content).WaitAsync(Timeout);
            Assert.True((int)response.StatusCode is 201 or 202, $"publish answered {(int)response.StatusCode}");
        }
    }

    /// <summary>Reads a stream through a target's wire and hands every message (topic, id, body) to the test.</summary>
    private sealed class RecordingHandler(IEventStreamWire wire) : IEventStreamHandler, IPollResponseSink
    {
        private readonly Channel<(long, long, string)> _messages = Channel.CreateUnbounded<(long, long, string)>();
        private int _errors;

        public ChannelReader<(long, long, string)> Messages => _messages.Reader;
        public int Errors => Volatile.Read(ref _errors);

        public bool TryWriteQuery(Span<byte> destination, out int written) => wire.TryWriteQuery(destination, out written);

        public bool TryWriteHeaders(Span<byte> destination, out int written) => wire.TryWriteHeaders(destination, out written);

        public StreamSignal OnHead(int status) => status == 200 && wire.OpenAtHead ? StreamSignal.Opened : StreamSignal.None;

        public StreamSignal OnEvent(in ServerSentEvent sse, long receivedAt) => wire.Read(sse, this);

        public void OnError(Exception exception) => Interlocked.Increment(ref _errors);

        public void OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body) =>
            _messages.Writer.TryWrite((topicId, messageId, Encoding.UTF8.GetString(body)));

        public void OnGap(long topicId, long fromMessageId, long toMessageId) => throw new InvalidOperationException("unexpected gap");

        public void OnReset(long topicId, long firstMessageId, bool epochChanged) => throw new InvalidOperationException("unexpected reset");

        public void OnTopicDeleted(long topicId) => throw new InvalidOperationException("unexpected topicDeleted");
    }
}
