using System.Net;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

/// <summary>The .NET client's publish to several topics, and the idempotency keys it sends, against the real server.</summary>
public sealed class PublishManyTests
{
    [Fact]
    public async Task PublishManyAnswersEachTopicsIdAndARefusalPublishesNothing()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var a = (await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout));
        var b = (await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout));

        var published = await client.PublishManyAsync([b, a], "both").WaitAsync(TestSupport.Timeout);
        var refused = await Assert.ThrowsAsync<LaharsubException>(() => client.PublishManyAsync([a, 999_999], "never").WaitAsync(TestSupport.Timeout));
        var stale = await Assert.ThrowsAsync<LaharsubException>(() => client.PublishManyAsync([a, b], TestSupport.Utf8("never"), "text/plain",
            new PublishOptions { ExpectedEpochs = new Dictionary<long, string> { [b] = "0000000000000000" } }).WaitAsync(TestSupport.Timeout));
        var infoA = await client.GetTopicAsync(a).WaitAsync(TestSupport.Timeout);

        Assert.Equal([(b, 1L), (a, 1L)], published.Select(p => (p.TopicId, p.MessageId)));
        Assert.All(published, p => Assert.False(string.IsNullOrEmpty(p.Epoch)));
        Assert.Equal(HttpStatusCode.NotFound, refused.StatusCode);
        Assert.Equal(HttpStatusCode.PreconditionFailed, stale.StatusCode);
        Assert.Equal(1, infoA.LastMessageId);
    }

    [Fact]
    public async Task AGivenKeyMakesARepeatedPublishReturnTheFirstAnswer()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var options = new PublishOptions { IdempotencyKey = Guid.NewGuid().ToString() };

        var first = await client.PublishAsync(topic, TestSupport.Utf8("x"), "text/plain", options).WaitAsync(TestSupport.Timeout);
        var again = await client.PublishAsync(topic, TestSupport.Utf8("x"), "text/plain", options).WaitAsync(TestSupport.Timeout);
        var many = await client.PublishManyAsync([topic], TestSupport.Utf8("y"), "text/plain", new PublishOptions { IdempotencyKey = "many-1" }).WaitAsync(TestSupport.Timeout);
        var manyAgain = await client.PublishManyAsync([topic], TestSupport.Utf8("y"), "text/plain", new PublishOptions { IdempotencyKey = "many-1" }).WaitAsync(TestSupport.Timeout);
        var reused = await Assert.ThrowsAsync<LaharsubException>(() =>
            client.PublishAsync(topic, TestSupport.Utf8("other"), "text/plain", options).WaitAsync(TestSupport.Timeout));

        Assert.Equal(first, again);
        Assert.Equal(many, manyAgain);
        Assert.Equal(2, many[0].MessageId);
        Assert.Equal(HttpStatusCode.UnprocessableEntity, reused.StatusCode);
        Assert.Equal(2, (await client.GetTopicAsync(topic).WaitAsync(TestSupport.Timeout)).LastMessageId);
    }

    [Theory]
    [InlineData("")]
    [InlineData("has \"quote\"")]
    [InlineData("é")]
    public async Task ABadKeyIsRefusedBeforeAnythingIsSent(string key)
    {
        await using var client = new LaharsubClient(new Uri("http://127.0.0.1:9/ps/"), TestSupport.Options());

        await Assert.ThrowsAsync<ArgumentException>(() => client.PublishAsync(1, TestSupport.Utf8("x"), "text/plain", new PublishOptions { IdempotencyKey = key }));
    }
}
