using System.Text.Json.Serialization;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

public sealed record Order(string Item, int Quantity);

[JsonSerializable(typeof(Order))]
internal sealed partial class TestJsonContext : JsonSerializerContext;

public sealed class PublishTests
{
    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task PublishedBytesArriveByteForByteWithTheirContentType(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(format);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        // Line breaks, dashes and a zero byte: everything a multipart or JSON parser could trip on.
        byte[] binary = [0, 13, 10, 45, 45, 13, 10, 13, 10, 255, 254, (byte)'"', (byte)'\\', 13];
        var published = await client.PublishAsync(topic, binary, "application/x-custom; v=1").WaitAsync(TestSupport.Timeout);

        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        var message = Assert.IsType<LaharsubMessage>(await reader.NextAsync());

        Assert.Equal((topic, 1L), (published.TopicId, published.MessageId));
        Assert.Equal(binary, message.Body.ToArray());
        Assert.Equal("application/x-custom; v=1", message.ContentType);
        Assert.Equal(topic, message.TopicId);
        Assert.Equal(1, message.MessageId);
        Assert.InRange(message.PublishedAt, DateTimeOffset.UtcNow.AddMinutes(-1), DateTimeOffset.UtcNow.AddMinutes(1));
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task PublishedTextArrivesAsUtf8PlainText(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(format);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        const string text = "Grüße, 世界 <b>\"quoted\"</b>\r\n--end";
        await client.PublishAsync(topic, text).WaitAsync(TestSupport.Timeout);
        await client.PublishAsync(topic, "<p>hi</p>", "text/html").WaitAsync(TestSupport.Timeout);

        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        var events = await reader.TakeAsync(2);

        Assert.Equal(text, events[0].Text());
        Assert.Equal("text/plain; charset=utf-8", ((LaharsubMessage)events[0]).ContentType);
        Assert.Equal("<p>hi</p>", events[1].Text());
        Assert.Equal("text/html", ((LaharsubMessage)events[1]).ContentType);
    }

    [Theory]
    [InlineData(PollFormat.Multipart)]
    [InlineData(PollFormat.Json)]
    public async Task PublishedJsonDeserializesBackWithReflectionOrSourceGeneration(PollFormat format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient(format);
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await client.PublishJsonAsync(topic, new Order("tea", 2)).WaitAsync(TestSupport.Timeout);
        await client.PublishJsonAsync(topic, new Order("milk", 1), TestJsonContext.Default.Order).WaitAsync(TestSupport.Timeout);

        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));
        var events = await reader.TakeAsync(2);
        var first = Assert.IsType<LaharsubMessage>(events[0]);
        var second = Assert.IsType<LaharsubMessage>(events[1]);

        Assert.Equal("application/json", first.ContentType);
        Assert.Equal("{\"item\":\"tea\",\"quantity\":2}", first.GetString());
        Assert.Equal(new Order("tea", 2), first.Deserialize<Order>());
        Assert.Equal(new Order("milk", 1), second.Deserialize(TestJsonContext.Default.Order));
    }

    [Fact]
    public async Task PublishingAnswersWithConsecutiveMessageIds()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        var ids = new List<long>();
        for (var i = 0; i < 3; i++)
        {
            ids.Add((await client.PublishAsync(topic, $"m{i}").WaitAsync(TestSupport.Timeout)).MessageId);
        }

        Assert.Equal([1L, 2L, 3L], ids);
        Assert.Equal(3, (await client.GetTopicAsync(topic).WaitAsync(TestSupport.Timeout)).LastMessageId);
    }
}
