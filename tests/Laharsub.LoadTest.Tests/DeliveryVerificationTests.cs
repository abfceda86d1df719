using System.Text;
using Laharsub.LoadTestClient.Load;
using Laharsub.LoadTestClient.Measurement;

namespace Laharsub.LoadTest.Tests;

/// <summary>Lost, duplicated and reordered deliveries are counted by the receiver, from the poll responses it reads.</summary>
public sealed class DeliveryVerificationTests
{
    private const long Topic = 7;

    [Fact]
    public void ASkippedIdIsCountedAsLost()
    {
        var (engine, client) = Receiver();
        using (engine)
        {
            Deliver(client, WireFormatKind.Json, 1, 2, 4);

            Assert.Equal(1, engine.Counters.Lost);
            Assert.Equal(0, engine.Counters.Duplicates);
            Assert.Equal(3, engine.DeliveriesTotal);
            Assert.Equal(5, client.Topics[0].Next);
        }
    }

    [Fact]
    public void ARepeatedIdIsCountedAsDuplicatedAndNotAsADelivery()
    {
        var (engine, client) = Receiver();
        using (engine)
        {
            Deliver(client, WireFormatKind.Json, 1, 2);
            Deliver(client, WireFormatKind.Json, 2);

            Assert.Equal(1, engine.Counters.Duplicates);
            Assert.Equal(0, engine.Counters.Lost);
            Assert.Equal(2, engine.DeliveriesTotal);
        }
    }

    [Fact]
    public void AnIdArrivingAfterALaterOneIsCountedOutOfOrderAndNoLongerLost()
    {
        var (engine, client) = Receiver();
        using (engine)
        {
            Deliver(client, WireFormatKind.Multipart, 1, 3, 2);

            Assert.Equal(0, engine.Counters.Lost);
            Assert.Equal(1, engine.Counters.OutOfOrder);
            Assert.Equal(3, engine.DeliveriesTotal);
        }
    }

    [Fact]
    public void ADroppedDeliveryInAMultipartResponseIsCountedAsLost()
    {
        var (engine, client) = Receiver();
        using (engine)
        {
            Deliver(client, WireFormatKind.Multipart, 1, 2, 3, 6);

            Assert.Equal(2, engine.Counters.Lost);
        }
    }

    [Fact]
    public void IdsCoveredByAGapNoticeAreCountedAsExpiredNotLost()
    {
        var (engine, client) = Receiver();
        using (engine)
        {
            var json = $$"""{"notices":[{"type":"gap","topicId":{{Topic}},"fromMessageId":1,"toMessageId":4}],"messages":[{{JsonMessage(5)}}]}""";
            var scratch = new byte[16];
            PollResponseReader.ReadJson(Encoding.UTF8.GetBytes(json), client, ref scratch);

            Assert.Equal(0, engine.Counters.Lost);
            Assert.Equal(1, engine.Counters.GapNotices);
            Assert.Equal(4, engine.Counters.GapMessages);
            Assert.Equal(6, client.Topics[0].Next);
        }
    }

    [Fact]
    public void AnEpochResetIsCountedApartFromOtherResetsAndIsNoDelivery()
    {
        var (engine, client) = Receiver();
        using (engine)
        {
            Deliver(client, WireFormatKind.Json, 1, 2, 3);
            // The topic id now names another incarnation: the answer restarts it from its message 1.
            var json = $$"""
                {"notices":[{"type":"reset","topicId":{{Topic}},"epoch":"9f3c0a1b2c3d4e5f","reason":"epochChanged","requestedFrom":4,
                "requestedEpoch":"0123456789abcdef","firstMessageId":1,"lastMessageId":1}],"messages":[{{JsonMessage(1)}}]}
                """;
            var scratch = new byte[16];
            PollResponseReader.ReadJson(Encoding.UTF8.GetBytes(json), client, ref scratch);

            Assert.Equal(1, engine.Counters.EpochResets);
            Assert.Equal(0, engine.Counters.Resets);
            Assert.Equal(4, engine.DeliveriesTotal);
            Assert.Equal(0, engine.Counters.Duplicates);
            Assert.Equal(2, client.Topics[0].Next);
        }
    }

    [Fact]
    public async Task TheRealServersEpochResetIsReadAsOneEpochResetFollowedByTheMessages()
    {
        var timeout = TimeSpan.FromSeconds(10);
        await using var server = await Laharsub.Testing.LaharsubTestServer.StartAsync().WaitAsync(timeout);
        var topic = (await LoadRuns.CreateTopicsAsync(server.BaseAddress, 1))[0];
        using var http = server.CreateClient(timeout);
        (await http.PostAsync($"topics/{topic}", new ByteArrayContent(Stamp())).WaitAsync(timeout)).EnsureSuccessStatusCode();
        // A subscription carrying an epoch the topic never had: the server answers with an epochChanged reset.
        var answer = await http.GetByteArrayAsync($"subscriptions?timeout=0&topics={topic}:1~0123456789abcdef").WaitAsync(timeout);
        var plan = LoadRuns.Plan(server.BaseAddress, [topic]) with { ClientsPerTopic = 1 };
        using var engine = new LoadEngine(plan);
        var scratch = new byte[16];

        PollResponseReader.ReadJson(answer, engine.Clients[0], ref scratch);

        Assert.Equal(1, engine.Counters.EpochResets);
        Assert.Equal(0, engine.Counters.Resets);
        Assert.Equal(1, engine.DeliveriesTotal);
        Assert.Equal(2, engine.Clients[0].Topics[0].Next);
    }

    [Theory]
    [InlineData("json")]
    [InlineData("multipart")]
    public void AResetForACursorBeyondTheEndIsAPlainReset(string format)
    {
        var (engine, client) = Receiver();
        using (engine)
        {
            const string notice = """{"type":"reset","topicId":7,"epoch":"9f3c0a1b2c3d4e5f","reason":"beyondEnd","requestedFrom":9,"firstMessageId":1,"lastMessageId":0}""";
            if (format == "json")
            {
                var scratch = new byte[16];
                PollResponseReader.ReadJson(Encoding.UTF8.GetBytes($$"""{"notices":[{{notice}}],"messages":[]}"""), client, ref scratch);
            }
            else
            {
                const string boundary = "laharsub-0123456789abcdef0123456789abcdef";
                var body = $"--{boundary}\r\nContent-Type: application/json\r\nLaharsub-Notice: reset\r\nLaharsub-Topic-Id: {Topic}\r\nLaharsub-Epoch: 9f3c0a1b2c3d4e5f\r\n\r\n{notice}\r\n--{boundary}--\r\n";
                PollResponseReader.ReadMultipart(Encoding.UTF8.GetBytes(body), Encoding.ASCII.GetBytes(boundary), client);
            }

            Assert.Equal(1, engine.Counters.Resets);
            Assert.Equal(0, engine.Counters.EpochResets);
            Assert.Equal(0, engine.DeliveriesTotal);
        }
    }

    [Fact]
    public void TheVerifierCountsEachKindOfAnomalyOnce()
    {
        var counters = new DeliveryCounters();
        var verifier = new DeliveryVerifier(Topic);

        Assert.Equal(DeliveryKind.InOrder, verifier.Observe(1, counters));
        Assert.Equal(DeliveryKind.AfterLoss, verifier.Observe(4, counters));
        Assert.Equal(DeliveryKind.OutOfOrder, verifier.Observe(2, counters));
        Assert.Equal(DeliveryKind.Duplicate, verifier.Observe(2, counters));
        Assert.Equal(DeliveryKind.Duplicate, verifier.Observe(4, counters));

        Assert.Equal(1, counters.Lost);
        Assert.Equal(1, counters.OutOfOrder);
        Assert.Equal(2, counters.Duplicates);
    }

    private static (LoadEngine Engine, SimulatedClient Client) Receiver()
    {
        var plan = LoadRuns.Plan(new Uri("http://127.0.0.1:9/"), [Topic]) with { ClientsPerTopic = 1 };
        var engine = new LoadEngine(plan);
        return (engine, engine.Clients[0]);
    }

    /// <summary>Feeds one poll response holding the given message ids through the receiver's reading path.</summary>
    private static void Deliver(SimulatedClient client, WireFormatKind format, params long[] messageIds)
    {
        if (format == WireFormatKind.Json)
        {
            var json = $$"""{"notices":[],"messages":[{{string.Join(',', messageIds.Select(JsonMessage))}}]}""";
            var scratch = new byte[16];
            PollResponseReader.ReadJson(Encoding.UTF8.GetBytes(json), client, ref scratch);
            return;
        }
        const string boundary = "laharsub-0123456789abcdef0123456789abcdef";
        var body = new List<byte>();
        foreach (var id in messageIds)
        {
            body.AddRange(Encoding.ASCII.GetBytes($"--{boundary}\r\nContent-Type: application/octet-stream\r\nLaharsub-Topic-Id: {Topic}\r\n"
                + $"Laharsub-Message-Id: {id}\r\nLaharsub-Published-At: 2026-11-22T09:30:01.500Z\r\n\r\n"));
            body.AddRange(Stamp());
            body.AddRange("\r\n"u8.ToArray());
        }
        body.AddRange(Encoding.ASCII.GetBytes($"--{boundary}--\r\n"));
        PollResponseReader.ReadMultipart(body.ToArray(), Encoding.ASCII.GetBytes(boundary), client);
    }

    private static string JsonMessage(long id) =>
        $$"""{"topicId":{{Topic}},"messageId":{{id}},"publishedAt":"2026-11-22T09:30:01.500Z","contentType":"application/octet-stream","encoding":"base64","body":"{{Convert.ToBase64String(Stamp())}}"}""";

    private static byte[] Stamp()
    {
        var body = new byte[MessageStamp.Size];
        var now = MonotonicClock.NowMicroseconds;
        MessageStamp.Write(body, now, now);
        return body;
    }
}
