using Laharsub.Server.Tests.Support;

namespace Laharsub.Server.Tests;

public sealed partial class FastPathTests
{
    /// <summary>The fast path parses conflate and latest with the pipeline's parser and hands its poll the same pacing.</summary>
    [Fact]
    public async Task AConflatedPollIsAnsweredOnTheFastPathWithTheConflatedNotice()
    {
        await using var server = await StartFastAsync();
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        var created = await ExchangeAsync(connection, Post("/ps/topics", "application/json", "{}"), timeout.Token);
        var topic = long.Parse(TopicIdPattern().Match(created.BodyText).Groups[1].Value);
        for (var i = 1; i <= 3; i++)
        {
            await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", $"m{i}"), timeout.Token);
        }

        var polled = await ExchangeAsync(connection, Get($"/ps/subscriptions?topics={topic}:1&latest=true&conflate=1&timeout=0"), timeout.Token);
        var refused = await ExchangeAsync(connection, Get($"/ps/subscriptions?topics={topic}:1&conflate=60001"), timeout.Token);

        Assert.Equal(200, polled.Status);
        Assert.Contains("{\"type\":\"conflated\",", polled.BodyText);
        Assert.Contains("\"fromMessageId\":1,\"toMessageId\":2", polled.BodyText);
        Assert.Contains("\"body\":\"m3\"", polled.BodyText);
        Assert.DoesNotContain("\"body\":\"m2\"", polled.BodyText);
        Assert.Equal(400, refused.Status);
        Assert.Contains("\"conflate\"", refused.BodyText);
        // The conflated poll on the fast path; the refused one on the pipeline, which writes the problem.
        Assert.Equal(1, requests.Count("poll"));
    }
}
