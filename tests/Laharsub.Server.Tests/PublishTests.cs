using System.Net;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests;

public sealed class PublishTests
{
    public static TheoryData<string> Formats => new() { "application/json", "multipart/mixed" };

    [Theory]
    [MemberData(nameof(Formats))]
    public async Task RandomBinaryAndUtf8BodiesComeBackByteIdentical(string format)
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var random = new Random(format.Length);
        var bodies = new List<(byte[] Body, string ContentType)>();
        for (var i = 0; i < 40; i++)
        {
            var binary = new byte[random.Next(1, 3000)];
            random.NextBytes(binary);
            bodies.Add((binary, i % 2 == 0 ? "application/octet-stream" : "text/plain"));
        }
        bodies.Add((Encoding.UTF8.GetBytes("héllo wörld — 你好 🎉 \"quotes\" \\ <tag> \r\n\u0001"), "text/plain; charset=utf-8"));
        bodies.Add((Encoding.UTF8.GetBytes("{\"user\":\"zoë\",\"text\":\"hi\"}"), "application/json"));
        bodies.Add(("\r\n--"u8.ToArray(), "text/plain"));
        foreach (var (body, contentType) in bodies)
        {
            await client.PublishAsync(topic, body, contentType);
        }

        var poll = await client.PollAsync($"topics={topic}:1", format);

        Assert.Equal(HttpStatusCode.OK, poll.Status);
        Assert.Equal(bodies.Count, poll.Messages.Count);
        for (var i = 0; i < bodies.Count; i++)
        {
            Assert.Equal(i + 1, poll.Messages[i].MessageId);
            Assert.Equal(bodies[i].ContentType, poll.Messages[i].ContentType);
            Assert.Equal(bodies[i].Body, poll.Messages[i].Body);
        }
    }

    [Fact]
    public async Task JsonCarriesTextAsAStringAndBinaryAsBase64()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "plain text");
        await client.PublishAsync(topic, [0xff, 0x00], "text/plain");
        await client.PublishAsync(topic, "AB"u8.ToArray(), "image/png");

        var raw = await client.GetStringAsync($"subscriptions?topics={topic}:1").WaitAsync(WireClient.Bound);

        Assert.Contains("\"encoding\":\"text\",\"body\":\"plain text\"", raw);
        Assert.Contains("\"encoding\":\"base64\",\"body\":\"/wA=\"", raw);
        Assert.Contains("\"encoding\":\"base64\",\"body\":\"QUI=\"", raw);
    }

    [Fact]
    public async Task AMessageWithoutContentTypeIsOctetStream()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishAsync(topic, [7], contentType: null);

        var poll = await client.PollAsync($"topics={topic}:1");

        Assert.Equal("application/octet-stream", Assert.Single(poll.Messages).ContentType);
    }

    [Fact]
    public async Task ConcurrentPublishersGetDistinctConsecutiveIds()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessagesPerTopic = 10_000);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        var ids = await Task.WhenAll(Enumerable.Range(0, 400).Select(i => client.PublishAsync(topic, BitConverter.GetBytes(i))));

        Assert.Equal(Enumerable.Range(1, 400).Select(i => (long)i), ids.Order());
    }

    [Fact]
    public async Task AnOversizedMessageIs413AndNotStored()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessageBytes = 100);
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        var (declared, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new ByteArrayContent(new byte[101]) });
        var chunked = new StreamContent(new MemoryStream(new byte[5000]));
        var (streamed, _) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = chunked });
        await client.PublishAsync(topic, new byte[100]);

        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, declared);
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, streamed);
        Assert.Contains("Laharsub:MaxMessageBytes", problem.GetProperty("detail").GetString());
        Assert.Equal(1, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task MaxMessageBytesWinsOverALowerKestrelBodyLimitAndItsRefusalIsLaharsubs()
    {
        // Kestrel's own limit is raised for publishes up to MaxMessageBytes, and a body beyond that
        // still gets Laharsub's 413 problem rather than Kestrel's bare one.
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessageBytes = 1000,
            settings: new Dictionary<string, string?> { ["Kestrel:Limits:MaxRequestBodySize"] = "100" });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        var accepted = await client.PublishAsync(topic, new byte[500]);
        var chunked = new StreamContent(new MemoryStream(new byte[1500]));
        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = chunked });

        Assert.Equal(1, accepted);
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, status);
        Assert.Contains("Laharsub:MaxMessageBytes", problem.GetProperty("detail").GetString());
        Assert.Equal(1, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
    }

    [Fact]
    public async Task WhenRetentionIsFullPublishingIs507AndNothingIsDropped()
    {
        // A message costs its body three times (raw and both wire forms) plus overhead: 600 bytes fit in 4000 once, not twice.
        await using var server = await LaharsubTestServer.StartAsync(o => { o.MaxRetainedBytes = 4000; o.MaxMessageBytes = 600; });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishAsync(topic, new byte[600]);

        using var refused = await client.PostAsync($"topics/{topic}", new ByteArrayContent(new byte[500])).WaitAsync(WireClient.Bound);
        var (status, problem) = await client.SendForProblemAsync(new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}") { Content = new ByteArrayContent(new byte[500]) });
        var poll = await client.PollAsync($"topics={topic}:1");

        Assert.Equal(HttpStatusCode.InsufficientStorage, status);
        // Retry-After says when the oldest message expires (MessageTimeToLive, 5 minutes by default), not a blind second.
        Assert.InRange(refused.Headers.RetryAfter!.Delta!.Value.TotalSeconds, 250, 300);
        Assert.Contains("Laharsub:MaxRetainedBytes", problem.GetProperty("detail").GetString());
        Assert.Equal(1, Assert.Single(poll.Messages).MessageId);
        Assert.Empty(poll.Notices);
    }

    [Fact]
    public async Task ABodyContainingTheServersBoundaryIsDeliveredIntactInAnAnswerFramedWithAnotherBoundary()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "harmless");
        var boundary = (await client.PollAsync($"topics={topic}:1", "multipart/mixed")).Response.Content.Headers.ContentType!
            .Parameters.Single(p => p.Name == "boundary").Value!.Trim('"');
        var forged = "hello\r\n--" + boundary + "\r\nContent-Type: text/plain\r\n\r\nforged";

        await client.PublishTextAsync(topic, forged);
        var poll = await client.PollAsync($"topics={topic}:1", "multipart/mixed");

        var framedWith = poll.Response.Content.Headers.ContentType!.Parameters.Single(p => p.Name == "boundary").Value!.Trim('"');
        Assert.NotEqual(boundary, framedWith);
        Assert.Equal(["harmless", forged], poll.Messages.Select(m => m.Text));
    }

    [Fact]
    public async Task AServerThatIsShuttingDownRefusesPublishesWith503SoThatNoneIsAcknowledgedAndLost()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var lifetime = server.Services.GetRequiredService<Microsoft.Extensions.Hosting.IHostApplicationLifetime>();
        var stopping = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        // Holds shutdown at its first step (polls answered, the server still serving), as a drain does.
        lifetime.ApplicationStopping.Register(() =>
        {
            stopping.TrySetResult();
            release.Task.Wait(WireClient.Bound);
        });
        var stop = Task.Run(server.StopAsync);
        await stopping.Task.WaitAsync(WireClient.Bound);

        HttpResponseMessage refused;
        try
        {
            refused = await client.PostAsync($"topics/{topic}", new StringContent("during shutdown")).WaitAsync(WireClient.Bound);
        }
        finally
        {
            release.TrySetResult();
        }
        await stop.WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.NotNull(refused.Headers.RetryAfter);
        Assert.Contains("shutting down", await refused.Content.ReadAsStringAsync());
        Assert.Equal(0, (await server.Store.GetTopicAsync(topic))!.LastMessageId);
    }
}
