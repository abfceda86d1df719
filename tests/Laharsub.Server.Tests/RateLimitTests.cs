using System.Net;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Server.Tests;

public sealed class RateLimitTests
{
    [Fact]
    public async Task AClientOverItsLimitGets429WithRetryAfterAndAProblemAndNothingChanges()
    {
        // A period of an hour: no token comes back while the test runs, however slow the machine.
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.RateLimit.RequestsPerPeriod = 3;
            o.RateLimit.Period = TimeSpan.FromHours(1);
        });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "one");
        await client.PublishTextAsync(topic, "two");

        using var refused = await client.PostAsync($"topics/{topic}", new StringContent("three")).WaitAsync(WireClient.Bound);

        Assert.Equal(HttpStatusCode.TooManyRequests, refused.StatusCode);
        Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
        Assert.InRange(refused.Headers.RetryAfter?.Delta?.TotalSeconds ?? 0, 1, 3600);
        var problem = await refused.Content.ReadAsStringAsync();
        Assert.Contains("Laharsub:RateLimit:RequestsPerPeriod", problem);
        Assert.Equal(2, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());

        // Creating and deleting topics count too; reading and polling do not.
        using (var create = await client.PostAsync("topics", null).WaitAsync(WireClient.Bound))
        {
            Assert.Equal(HttpStatusCode.TooManyRequests, create.StatusCode);
        }
        using (var delete = await client.DeleteAsync($"topics/{topic}").WaitAsync(WireClient.Bound))
        {
            Assert.Equal(HttpStatusCode.TooManyRequests, delete.StatusCode);
        }
        var poll = await client.PollAsync($"topics={topic}:1&timeout=0");
        Assert.Equal(["one", "two"], poll.Messages.Select(m => m.Text));
    }

    [Fact]
    public async Task ABurstAboveTheRateIsAllowedUpToItsSize()
    {
        await using var server = await LaharsubTestServer.StartAsync(o =>
        {
            o.RateLimit.RequestsPerPeriod = 1;
            o.RateLimit.Period = TimeSpan.FromHours(1);
            o.RateLimit.Burst = 5;
        });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var statuses = new List<HttpStatusCode>();
        for (var i = 0; i < 6; i++)
        {
            using var response = await client.PostAsync($"topics/{topic}", new StringContent($"m{i}", Encoding.UTF8)).WaitAsync(WireClient.Bound);
            statuses.Add(response.StatusCode);
        }

        Assert.Equal([.. Enumerable.Repeat(HttpStatusCode.Created, 4), HttpStatusCode.TooManyRequests, HttpStatusCode.TooManyRequests], statuses);
    }

    [Fact]
    public async Task WithoutALimitConfiguredPublishingIsNotLimited()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        for (var i = 0; i < 200; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }

        Assert.Equal(200, (await client.GetTopicAsync(topic)).GetProperty("lastMessageId").GetInt64());
        // Not even a no-op limiter: without rate limit metadata the middleware passes requests straight on.
        var endpoints = server.Services.GetRequiredService<EndpointDataSource>().Endpoints;
        Assert.NotEmpty(endpoints);
        Assert.All(endpoints, endpoint => Assert.Null(endpoint.Metadata.GetMetadata<EnableRateLimitingAttribute>()));
    }
}
