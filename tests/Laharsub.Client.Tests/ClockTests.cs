using System.Net;
using System.Net.Http.Headers;
using System.Threading.Channels;

namespace Laharsub.Client.Tests;

/// <summary>
/// The client waits and measures time on <see cref="LaharsubClientOptions.TimeProvider"/>: a fake clock
/// (which starts in the year 2000) decides when retries go out and requests time out, with no real waiting.
/// </summary>
public sealed class ClockTests
{
    private static readonly Uri A = new("http://a.test/ps/");

    private static LaharsubClientOptions Options(WatchedClock clock)
    {
        var options = TestSupport.Options();
        options.TimeProvider = clock;
        return options;
    }

    [Fact]
    public async Task ASubscriptionWaitsOutItsRetryOnTheGivenClock()
    {
        var clock = new WatchedClock();
        var handler = new ScriptedHandler();
        var options = Options(clock);
        await using var client = new LaharsubClient(handler.CreateClient(), [A], options);
        await using var subscription = client.Subscribe([new(3, 1)]);
        var delays = Channel.CreateUnbounded<TimeSpan>();
        subscription.Retrying += (_, retry) => delays.Writer.TryWrite(retry.Delay);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;

        (await handler.NextPollAsync()).RespondJson(HttpStatusCode.ServiceUnavailable, """{"title":"Unavailable","status":503}""", "application/problem+json",
            response => response.Headers.RetryAfter = new RetryConditionHeaderValue(TimeSpan.FromSeconds(3)));
        var delay = await delays.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        // The poll's own time limit (PollTimeout + RequestTimeout) is armed too; the retry wait is the shorter one.
        var armed = await clock.NextArmedAsync(due => due < options.RequestTimeout);
        clock.Advance(armed);
        var again = await handler.NextPollAsync();

        Assert.InRange(delay, TimeSpan.FromSeconds(3), TimeSpan.FromSeconds(3) + options.RetryDelay);
        // Task.Delay keeps whole milliseconds.
        Assert.InRange(armed, delay - TimeSpan.FromMilliseconds(1), delay);
        Assert.Equal("3:1", again.Topics);
    }

    [Fact]
    public async Task ARetryAfterDateIsMeasuredFromTheGivenClocksNow()
    {
        var clock = new WatchedClock();
        var handler = new ScriptedHandler();
        var options = Options(clock);
        await using var client = new LaharsubClient(handler.CreateClient(), [A], options);

        var publishing = client.PublishAsync(14, "hello");
        // Five seconds after the fake clock's now: decades ago by the system clock, which would mean "at once".
        (await handler.NextAsync()).RespondJson(HttpStatusCode.ServiceUnavailable, """{"title":"Unavailable","status":503}""", "application/problem+json",
            response => response.Headers.RetryAfter = new RetryConditionHeaderValue(clock.GetUtcNow() + TimeSpan.FromSeconds(5)));
        var armed = await clock.NextArmedAsync(due => due < options.RequestTimeout);
        clock.Advance(armed);
        (await handler.NextAsync()).RespondJson(HttpStatusCode.Created, """{"topicId":14,"messageId":1}""");
        var published = await publishing.WaitAsync(TestSupport.Timeout);

        Assert.InRange(armed, TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(5) + options.RetryDelay);
        Assert.Equal(new PublishedMessage(14, 1), published);
    }

    [Fact]
    public async Task ARequestTimesOutOnTheGivenClock()
    {
        var clock = new WatchedClock();
        var handler = new ScriptedHandler();
        var options = Options(clock);
        options.MaxRequestAttempts = 1;
        await using var client = new LaharsubClient(handler.CreateClient(), [A], options);

        var getting = client.GetTopicAsync(3);
        var request = await handler.NextAsync();
        await clock.NextArmedAsync(due => due == options.RequestTimeout);
        clock.Advance(options.RequestTimeout);

        await Assert.ThrowsAsync<TimeoutException>(() => getting.WaitAsync(TestSupport.Timeout));
        Assert.True(request.Abandoned);
    }
}
