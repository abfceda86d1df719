using System.Text;
using System.Text.Json;
using Laharsub.LoadTestClient.Hosting;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTest.Tests;

/// <summary>
/// The nchan adapter's cursor: what each poll sends (the channel in the query, the last message's
/// Last-Modified and Etag back as If-Modified-Since and If-None-Match), how an answer moves it, and how
/// nchan's TIME:TAG ids are ordered and checked.
/// </summary>
public sealed class NchanProtocolTests
{
    private const string Prefix = "lt0123abcd-";

    [Fact]
    public void TheFirstPollNamesTheChannelAndAsksForTheOldestMessage()
    {
        var wire = Wire(topic: 17);

        Assert.Equal("id=lt0123abcd-17", Query(wire));
        Assert.Equal("If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\nIf-None-Match: 0\r\n", Headers(wire));
    }

    [Fact]
    public void EachAnswerIsOneMessageAndItsLastModifiedAndEtagAreTheNextPollsCursor()
    {
        var wire = Wire(topic: 17);
        var sink = new Sink();

        Read(wire, sink, "Mon, 23 Nov 2026 19:11:58 GMT", "2", "hello");

        var seconds = new DateTimeOffset(2026, 11, 23, 19, 11, 58, TimeSpan.Zero).ToUnixTimeSeconds();
        Assert.Equal([(17L, NchanMessageId.Pack(seconds, 2), "hello")], sink.Messages);
        Assert.Equal("If-Modified-Since: Mon, 23 Nov 2026 19:11:58 GMT\r\nIf-None-Match: 2\r\n", Headers(wire));

        Read(wire, sink, "Mon, 23 Nov 2026 19:11:59 GMT", "0", "next second");
        Assert.Equal("If-Modified-Since: Mon, 23 Nov 2026 19:11:59 GMT\r\nIf-None-Match: 0\r\n", Headers(wire));
        Assert.True(sink.Messages[1].Id > sink.Messages[0].Id, "a later second's tag 0 must order after an earlier second's tag 2");
    }

    [Fact]
    public void AnAnswerWithoutACursorIsRefusedAndTheCursorStaysWhereItWas()
    {
        var wire = Wire(topic: 17);
        Read(wire, new Sink(), "Mon, 23 Nov 2026 19:11:58 GMT", "4", "x");

        var head = Encoding.ASCII.GetBytes("HTTP/1.1 200 OK\r\nLast-Modified: Mon, 23 Nov 2026 19:12:00 GMT\r\nContent-Length: 1\r\n");
        var exception = Assert.Throws<FormatException>(() => wire.Read(new RawPollResponse(200, head, default, "y"u8), new Sink()));

        Assert.Contains("without Last-Modified and Etag", exception.Message);
        Assert.Equal("If-Modified-Since: Mon, 23 Nov 2026 19:11:58 GMT\r\nIf-None-Match: 4\r\n", Headers(wire));
    }

    [Theory]
    [InlineData("Mon, 23 Nov 2026 19:11:58 GMT", "\"2\"")]
    [InlineData("yesterday", "2")]
    [InlineData("Mon, 23 Nov 2026 19:11:58 GMT", "[0],1")]
    public void AnUnreadableMessageIdIsRefused(string lastModified, string etag)
    {
        Assert.Throws<FormatException>(() => Read(Wire(topic: 1), new Sink(), lastModified, etag, "x"));
    }

    [Fact]
    public void AWaitedOutPollIsEmptyAndAnyOtherStatusIsNot()
    {
        var wire = Wire(topic: 1);

        Assert.True(wire.IsEmpty(408));
        Assert.True(wire.IsEmpty(304));
        Assert.False(wire.IsEmpty(204));
        Assert.False(wire.IsEmpty(200));
    }

    [Fact]
    public void HeadersThatDoNotFitAskForARoomierBuffer()
    {
        Assert.False(Wire(topic: 1).TryWriteHeaders(new byte[20], out _));
    }

    [Fact]
    public void APublishAnswerNamesTheChannelsLastMessageId()
    {
        var protocol = Protocol();

        var id = protocol.ReadPublishedId("""{"messages": 2, "requested": -1, "subscribers": 0, "last_message_id": "1795461021:1" }"""u8);

        Assert.Equal(NchanMessageId.Pack(1795461021, 1), id);
        Assert.Equal("pub?id=lt0123abcd-5", protocol.PublishPath(5));
        Assert.True(protocol.IsPublishAccepted(201) && protocol.IsPublishAccepted(202) && !protocol.IsPublishAccepted(200));
        Assert.ThrowsAny<JsonException>(() => protocol.ReadPublishedId("queued messages: 1\r\nlast message id: 1795461021:0"u8));
    }

    [Fact]
    public void WithNchansIdsARepeatedMessageIsADuplicateAndNotADelivery()
    {
        var counters = new DeliveryCounters();
        var verifier = new DeliveryVerifier(1, consecutiveIds: false);

        Assert.Equal(DeliveryKind.InOrder, verifier.Observe(NchanMessageId.Pack(100, 0), counters));
        Assert.Equal(DeliveryKind.InOrder, verifier.Observe(NchanMessageId.Pack(100, 1), counters));
        Assert.Equal(DeliveryKind.InOrder, verifier.Observe(NchanMessageId.Pack(102, 0), counters));
        Assert.Equal(DeliveryKind.Duplicate, verifier.Observe(NchanMessageId.Pack(102, 0), counters));
        Assert.Equal(DeliveryKind.Duplicate, verifier.Observe(NchanMessageId.Pack(100, 1), counters));

        Assert.Equal(2, counters.Duplicates);
        // Holes are how nchan numbers messages, not losses: a lost message shows as a missing delivery.
        Assert.Equal(0, counters.Lost);
    }

    [Fact]
    public void TheConfigurationGetsThisRunsPortAndPollTimeout()
    {
        var repository = ServerProcessRoot();
        var configuration = File.ReadAllText(Path.Combine(repository, NchanProcess.ConfigRelativePath));

        var configured = NchanProcess.Configure(configuration, 40123, 7);

        Assert.Contains("listen 127.0.0.1:40123 reuseport;", configured);
        Assert.Contains("nchan_subscriber_timeout 7s;", configured);
        Assert.DoesNotContain("listen 127.0.0.1:8090", configured);
    }

    [Fact]
    public void AConfigurationWithoutTheListenLineIsRefusedWithTheReason()
    {
        var exception = Assert.Throws<InvalidOperationException>(() => NchanProcess.Configure("http { nchan_subscriber_timeout 30s; }", 1, 1));

        Assert.Contains("must contain exactly one 'listen 127.0.0.1:PORT'", exception.Message);
    }

    private static string ServerProcessRoot() =>
        ServerProcess.FindRepositoryRoot() ?? throw new InvalidOperationException("The tests run inside the repository; Laharsub.sln was not found above them.");

    private static NchanProtocol Protocol() => new(LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [1]) with { Target = TargetKind.Nchan, ChannelPrefix = Prefix });

    private static NchanProtocol.Wire Wire(long topic) =>
        (NchanProtocol.Wire)Protocol().CreatePollWire([new DeliveryVerifier(topic, consecutiveIds: false)]);

    private static string Query(NchanProtocol.Wire wire)
    {
        var buffer = new byte[256];
        Assert.True(wire.TryWriteQuery(buffer, out var written));
        return Encoding.ASCII.GetString(buffer, 0, written);
    }

    private static string Headers(NchanProtocol.Wire wire)
    {
        var buffer = new byte[256];
        Assert.True(wire.TryWriteHeaders(buffer, out var written));
        return Encoding.ASCII.GetString(buffer, 0, written);
    }

    private static void Read(IPollWire wire, IPollResponseSink sink, string lastModified, string etag, string body)
    {
        var head = Encoding.ASCII.GetBytes($"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {body.Length}\r\n"
            + $"Last-Modified: {lastModified}\r\nConnection: keep-alive\r\nEtag: {etag}\r\nVary: If-None-Match, If-Modified-Since\r\n");
        wire.Read(new RawPollResponse(200, head, "application/octet-stream"u8, Encoding.ASCII.GetBytes(body)), sink);
    }

    private sealed class Sink : IPollResponseSink
    {
        public List<(long Topic, long Id, string Body)> Messages { get; } = [];

        public void OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body) => Messages.Add((topicId, messageId, Encoding.ASCII.GetString(body)));

        public void OnGap(long topicId, long fromMessageId, long toMessageId) => throw new InvalidOperationException("nchan sends no gap notices");

        public void OnReset(long topicId, long firstMessageId, bool epochChanged) => throw new InvalidOperationException("nchan sends no reset notices");

        public void OnTopicDeleted(long topicId) => throw new InvalidOperationException("nchan sends no deletion notices");
    }
}
