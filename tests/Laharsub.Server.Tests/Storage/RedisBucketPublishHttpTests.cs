using System.Net;
using System.Text;
using System.Text.Json;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests.Storage;

/// <summary>
/// A publish to several topics on Redis with <c>Laharsub:Redis:Buckets</c> = 16, over the wire (docs/protocol.md,
/// "Publishing to several topics"): topics of two buckets are refused with a problem naming <c>topics</c>
/// and nothing is stored; topics of one bucket get every copy; the same by REST and by a WebSocket frame.
/// </summary>
public sealed class RedisBucketPublishHttpTests
{
    private const int Buckets = 16;

    [Fact]
    public async Task ARestPublishAcrossBucketsIsA400NamingTopicsThatStoresNothingAndWithinABucketStoresBoth()
    {
        await using var server = await StartAsync();
        using var client = server.CreateClient();
        var (first, otherBucket, sameBucket) = await CreateTopicsAsync(client);

        using var across = new HttpRequestMessage(HttpMethod.Post, $"topics/publish?topics={first},{otherBucket}") { Content = new StringContent("never", Encoding.UTF8, "text/plain") };
        var (status, problem) = await client.SendForProblemAsync(across);
        Assert.Equal(HttpStatusCode.BadRequest, status);
        AssertSaysPublishSeparately(problem);
        await AssertNothingStoredAsync(client, first, otherBucket);

        using var within = new HttpRequestMessage(HttpMethod.Post, $"topics/publish?topics={first},{sameBucket}") { Content = new StringContent("both", Encoding.UTF8, "text/plain") };
        using var published = await client.SendAsync(within).WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.Created, published.StatusCode);
        await AssertBothStoredOnceAsync(client, first, sameBucket);
    }

    [Fact]
    public async Task AWebSocketPublishAcrossBucketsIsAProblemFrameNamingTopicsThatStoresNothingAndWithinABucketStoresBoth()
    {
        await using var server = await StartAsync();
        using var client = server.CreateClient();
        var (first, otherBucket, sameBucket) = await CreateTopicsAsync(client);
        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, "");
        await socket.ReceiveAsync("subscribed");

        await socket.SendAsync($$"""{"type":"publish","id":"across","topics":"{{first}},{{otherBucket}}","body":"never"}""");
        var refused = await socket.ReceiveAsync("problem");
        Assert.Equal("across", refused.GetProperty("id").GetString());
        Assert.Equal(400, refused.GetProperty("problem").GetProperty("status").GetInt32());
        AssertSaysPublishSeparately(refused.GetProperty("problem"));
        await AssertNothingStoredAsync(client, first, otherBucket);

        // The socket goes on after the refusal.
        await socket.SendAsync($$"""{"type":"publish","id":"within","topics":"{{first}},{{sameBucket}}","contentType":"text/plain","body":"both"}""");
        var published = await socket.ReceiveAsync("published");
        Assert.Equal("within", published.GetProperty("id").GetString());
        Assert.Equal([first, sameBucket], published.GetProperty("messages").EnumerateArray().Select(m => m.GetProperty("topicId").GetInt64()));
        await AssertBothStoredOnceAsync(client, first, sameBucket);
    }

    private static async Task<LaharsubTestServer> StartAsync()
    {
        var redis = await SharedRedis.GetAsync();
        var prefix = SharedRedis.UniquePrefix();
        // Buckets as an operator sets it: AddRedis binds Laharsub:Redis from the configuration.
        return await LaharsubTestServer.StartAsync(
            services: services => services.AddLaharsub().AddRedis(o => { o.Configuration = redis.Configuration; o.KeyPrefix = prefix; }),
            settings: new Dictionary<string, string?> { ["Laharsub:Redis:Buckets"] = Buckets.ToString(System.Globalization.CultureInfo.InvariantCulture) });
    }

    /// <summary>Creates topics until it has a first one, one in another bucket, and one in the first one's bucket (id mod 16).</summary>
    private static async Task<(long First, long OtherBucket, long SameBucket)> CreateTopicsAsync(HttpClient client)
    {
        var first = await client.CreateTopicAsync();
        long? other = null, same = null;
        for (var created = 0; other is null || same is null; created++)
        {
            Assert.True(created < 4 * Buckets, $"{created} topics after {first}, none in its bucket ({same}) or none in another ({other})");
            var topic = await client.CreateTopicAsync();
            if (topic % Buckets == first % Buckets)
            {
                same ??= topic;
            }
            else
            {
                other ??= topic;
            }
        }
        return (first, other.Value, same.Value);
    }

    private static void AssertSaysPublishSeparately(JsonElement problem)
    {
        Assert.True(problem.GetProperty("errors").TryGetProperty("topics", out var topics), $"the problem names topics: {problem}");
        var message = topics[0].GetString();
        Assert.Contains("Laharsub:Redis:Buckets", message, StringComparison.Ordinal);
        Assert.Contains("Nothing was published", message, StringComparison.Ordinal);
        Assert.Contains("Publish to them separately", message, StringComparison.Ordinal);
    }

    private static async Task AssertNothingStoredAsync(HttpClient client, long a, long b)
    {
        foreach (var topic in new[] { a, b })
        {
            Assert.Equal(0, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
        }
        Assert.Equal(HttpStatusCode.NoContent, (await client.PollAsync($"topics={a}:1,{b}:1&timeout=0")).Status);
    }

    private static async Task AssertBothStoredOnceAsync(HttpClient client, long a, long b)
    {
        var poll = await client.PollAsync($"topics={a}:1,{b}:1&timeout=0");
        Assert.Equal([(a, 1L, "both"), (b, 1L, "both")], poll.Messages.OrderBy(m => m.TopicId).Select(m => (m.TopicId, m.MessageId, m.Text)));
    }
}
