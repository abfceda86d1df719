using System.Text;
using System.Text.Json.Nodes;
using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using static Laharsub.Server.Tests.State.StateTopicTests;

namespace Laharsub.Server.Tests.State;

/// <summary>
/// The property of field-level conflation: a subscriber that applies what it receives, whatever runs of messages the
/// server conflated, always holds the exact document: the one a reference that applies every message holds. Random
/// (seeded, so every run is the same) sequences of patches and replacements with nested objects, nulls, arrays and
/// changes of type.
/// </summary>
public sealed class StateConflationPropertyTests
{
    private const string Patch = MergePatch.MediaType;
    private static readonly string[] Keys = ["a", "b", "c", "d"];

    /// <summary>The composition the delivery uses, cut into random runs, 400 sequences of 60 messages.</summary>
    [Fact]
    public void ComposedRunsAlwaysLeaveTheSubscriberWithTheReferenceDocument()
    {
        var composed = 0;
        var documents = 0;
        for (var seed = 1; seed <= 400; seed++)
        {
            var random = new Random(seed);
            var messages = Sequence(random, 60);
            var reference = new List<byte[]>();
            var document = "{}"u8.ToArray();
            foreach (var message in messages)
            {
                document = Applied(document, message);
                reference.Add(document);
            }
            var held = "{}"u8.ToArray();
            for (var start = 0; start < messages.Count;)
            {
                var length = Math.Min(random.Next(1, 8), messages.Count - start);
                var run = messages.GetRange(start, length);
                start += length;
                if (length == 1)
                {
                    held = Applied(held, run[0]);
                }
                else if (StateConflation.Compose(run.ToArray()) is { } one)
                {
                    Assert.Equal(run[^1].MessageId, one.MessageId);
                    held = Applied(held, one);
                    composed++;
                }
                else
                {
                    // What the server sends instead: the document at the run's end (a state notice).
                    held = reference[start - 1];
                    documents++;
                }
                AssertSame(reference[start - 1], held, $"seed {seed}, after message {start}");
            }
        }
        // The generator reaches both outcomes, so the property is checked for each.
        Assert.True(composed > 1000, $"only {composed} runs composed");
        Assert.True(documents > 50, $"only {documents} runs fell back to the document");
    }

    /// <summary>
    /// The same property end to end: random patches and replacements published to a server, a subscriber polling
    /// with <c>latest=true</c> after a random number of them, applying notices and messages as docs/protocol.md says.
    /// </summary>
    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    [InlineData(13)]
    public async Task ASubscriberConflatingAtRandomPointsHoldsTheDocumentThePublisherMade(int seed)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var (topic, epoch, _) = await CreateStateTopicAsync(client);
        var random = new Random(seed);
        var held = (JsonNode)new JsonObject();
        long from = 1;
        var published = 0;
        while (published < 40)
        {
            var burst = random.Next(1, 6);
            for (var i = 0; i < burst && published < 40; i++, published++)
            {
                var replace = random.Next(100) < 15;
                var body = replace ? Value(random, 3, allowNull: false, forceObject: true) : PatchNode(random, 3);
                using var answer = await SendAsync(client, replace ? HttpMethod.Put : HttpMethod.Post,
                    replace ? $"topics/{topic}/state" : $"topics/{topic}", body.ToJsonString(), replace ? "application/json" : Patch);
            }
            var poll = await client.PollAsync($"topics={topic}:{from}~{epoch}&latest=true&timeout=0");
            foreach (var notice in poll.Notices.Where(n => n.Type == "state"))
            {
                held = JsonNode.Parse(notice.Json.GetProperty("document").GetRawText())!;
                from = notice.Get("version") + 1;
            }
            foreach (var message in poll.Messages)
            {
                held = JsonNode.Parse(Applied(Encoding.UTF8.GetBytes(held.ToJsonString()),
                    new Message(topic, epoch, message.MessageId, default, message.ContentType, message.Body)))!;
                from = message.MessageId + 1;
            }
            var (_, _, document) = await GetStateAsync(client, topic);
            AssertSame(Encoding.UTF8.GetBytes(document), Encoding.UTF8.GetBytes(held.ToJsonString()), $"seed {seed}, after {published} messages");
        }
    }

    private static List<Message> Sequence(Random random, int count)
    {
        var messages = new List<Message>(count);
        for (var id = 1; id <= count; id++)
        {
            var replace = random.Next(100) < 12;
            var body = replace ? Value(random, 3, allowNull: false, forceObject: true) : PatchNode(random, 3);
            messages.Add(new Message(1, "e", id, default, replace ? MergePatch.DocumentMediaType : Patch, Encoding.UTF8.GetBytes(body.ToJsonString())));
        }
        return messages;
    }

    /// <summary>A patch: an object whose members set values, delete (null) or patch nested objects.</summary>
    private static JsonObject PatchNode(Random random, int depth)
    {
        var patch = new JsonObject();
        foreach (var key in Keys)
        {
            if (random.Next(3) != 0)
            {
                continue;
            }
            patch[key] = random.Next(6) switch
            {
                0 => null,
                1 or 2 when depth > 0 => PatchNode(random, depth - 1),
                _ => Value(random, depth - 1, allowNull: false, forceObject: false),
            };
        }
        return patch;
    }

    private static JsonNode Value(Random random, int depth, bool allowNull, bool forceObject)
    {
        var kind = forceObject ? 0 : random.Next(depth > 0 ? 7 : 5);
        switch (kind)
        {
            case 0 or 5 or 6 when depth > 0 || forceObject:
                var value = new JsonObject();
                foreach (var key in Keys)
                {
                    if (random.Next(2) == 0)
                    {
                        value[key] = depth > 0 ? Value(random, depth - 1, allowNull, false) : random.Next(100);
                    }
                }
                return value;
            case 1:
                return new JsonArray(random.Next(10), "x", new JsonObject { ["in"] = random.Next(3) });
            case 2:
                return $"s{random.Next(5)}";
            case 3:
                return random.Next(2) == 0;
            default:
                return random.Next(-5, 1000);
        }
    }

    private static byte[] Applied(byte[] document, Message message) =>
        MergePatch.IsMergePatch(message.ContentType) ? MergePatch.Apply(document, message.Body.Span) : message.Body.ToArray();

    private static void AssertSame(byte[] expected, byte[] actual, string where)
    {
        var (e, a) = (Encoding.UTF8.GetString(expected), Encoding.UTF8.GetString(actual));
        Assert.True(JsonNode.DeepEquals(JsonNode.Parse(e), JsonNode.Parse(a)), $"{where}: the reference holds {e}, the subscriber {a}");
    }
}
