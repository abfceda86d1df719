using System.Net;
using Laharsub.Testing;

namespace Laharsub.Client.Tests;

public sealed class ErrorTests
{
    [Fact]
    public async Task PublishingToAnUnknownTopicSurfacesTheServersExplanationWithoutRetrying()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options());

        var error = await Assert.ThrowsAsync<LaharsubException>(() => client.PublishAsync(42, "anyone?").WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.NotFound, error.StatusCode);
        Assert.Equal("Topic not found", error.Title);
        Assert.Contains("Topic 42 does not exist", error.Detail);
        Assert.Contains("Topic 42 does not exist", error.Message);
        Assert.Equal(42, error.TopicId);
        Assert.Equal(1, handler.Requests);
    }

    [Fact]
    public async Task ARateLimitThatAsksForALongerWaitThanMaxRetryAfterSurfacesAtOnce()
    {
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.RateLimit.RequestsPerPeriod = 1;
            o.RateLimit.Period = TimeSpan.FromHours(1);
        });
        using var handler = new CountingHandler();
        using var http = handler.CreateClient(server.ApiAddress);
        await using var client = new LaharsubClient(http, TestSupport.Options());
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        var error = await Assert.ThrowsAsync<LaharsubException>(() => client.PublishAsync(topic, "too soon").WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.TooManyRequests, error.StatusCode);
        Assert.Contains("Laharsub:RateLimit:RequestsPerPeriod", error.Detail);
        Assert.Equal(2, handler.Requests);
    }

    [Fact]
    public async Task ATooLargeMessageSurfacesTheServersLimit()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxMessageBytes = 10);
        await using var client = server.CreateLaharsubClient();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        var error = await Assert.ThrowsAsync<LaharsubException>(() => client.PublishAsync(topic, "eleven byte").WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, error.StatusCode);
        Assert.Contains("at most 10 bytes", error.Message);
    }

    [Fact]
    public async Task CreatingMoreTopicsThanAllowedSurfacesTheLimit()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxTopics = 1);
        await using var client = server.CreateLaharsubClient();
        await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);

        var error = await Assert.ThrowsAsync<LaharsubException>(() => client.CreateTopicAsync().WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.Conflict, error.StatusCode);
        Assert.Contains("maximum of 1 topics", error.Detail);
    }

    [Fact]
    public async Task DeletingAnUnknownTopicSurfacesNotFound()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        await using var client = server.CreateLaharsubClient();

        var error = await Assert.ThrowsAsync<LaharsubException>(() => client.DeleteTopicAsync(7).WaitAsync(TestSupport.Timeout));

        Assert.Equal(HttpStatusCode.NotFound, error.StatusCode);
        Assert.Contains("Topic 7 does not exist", error.Detail);
    }

    [Fact]
    public async Task APollTheServerRefusesEndsTheReadWithTheServersValidationMessage()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => o.MaxSubscriptionsPerPoll = 2);
        await using var client = server.CreateLaharsubClient();
        var topics = new List<KeyValuePair<long, long>>();
        for (var i = 0; i < 3; i++)
        {
            topics.Add(new(await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout), 1));
        }
        await using var reader = new EventReader(client.Subscribe(topics));

        var error = await Assert.ThrowsAsync<LaharsubException>(() => reader.NextAsync());

        Assert.Equal(HttpStatusCode.BadRequest, error.StatusCode);
        Assert.Contains("Laharsub:MaxSubscriptionsPerPoll", Assert.Single(error.Errors).Value.Single());
        Assert.Contains("MaxSubscriptionsPerPoll", error.Message);
    }

    [Fact]
    public async Task APollLongerThanTheServersRequestLineSaysToSplitTheTopics()
    {
        // Kestrel answers a bare 414 before Laharsub sees the request: the client supplies the advice.
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?>
        {
            ["Kestrel:Limits:MaxRequestLineSize"] = "300",
        });
        await using var client = server.CreateLaharsubClient();
        var topics = new List<KeyValuePair<long, long>>();
        // About 6 bytes per topic in the compact form: 100 topics overflow 300 bytes twice over.
        for (var i = 0; i < 100; i++)
        {
            topics.Add(new(await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout), 1));
        }
        await using var reader = new EventReader(client.Subscribe(topics));

        var error = await Assert.ThrowsAsync<LaharsubException>(() => reader.NextAsync());

        Assert.Equal(HttpStatusCode.RequestUriTooLong, error.StatusCode);
        Assert.Contains("Split the topics over several subscriptions", error.Message);
        Assert.Contains("Kestrel:Limits:MaxRequestLineSize", error.Message);
    }

    [Fact]
    public async Task APollTimeoutAboveTheServersMaximumSurfacesTheServersLimit()
    {
        await using var server = await LaharsubTestServer.StartAsync(o => (o.MaxPollTimeout, o.DefaultPollTimeout) = (TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(5)));
        await using var client = new LaharsubClient(server.ApiAddress, TestSupport.Options(pollSeconds: 6));
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await using var reader = new EventReader(client.Subscribe([new(topic, 1)]));

        var error = await Assert.ThrowsAsync<LaharsubException>(() => reader.NextAsync());

        Assert.Equal(HttpStatusCode.BadRequest, error.StatusCode);
        Assert.Contains("timeout", error.Errors.Keys);
        Assert.Contains("from 0 to 5", error.Message);
    }
}
