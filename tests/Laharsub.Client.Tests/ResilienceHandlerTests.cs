using System.Threading.Channels;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Polly.Timeout;

namespace Laharsub.Client.Tests;

/// <summary>
/// A subscription behind <c>AddStandardResilienceHandler()</c> with its defaults (10 s per attempt, 30 s
/// in all), as Aspire's service defaults add it to every HttpClient. The handler and the client share a
/// fake clock that the test moves; the server holds polls on real time, which the test never waits out.
/// </summary>
public sealed class ResilienceHandlerTests
{
    private static readonly TimeSpan AttemptTimeout = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan TotalTimeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task ALongPollCutByTheHandlersTimeoutIsRetriedFromItsCursorAndLaterPollsHoldUnderIt()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var clock = new WatchedClock();
        await using var provider = Register(server, clock, LaharsubTransport.LongPolling);
        var client = provider.GetRequiredService<LaharsubClient>();
        await using var publisher = server.CreateLaharsubClient();
        var topic = await publisher.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        await publisher.PublishAsync(topic, "before").WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(topic, 1)]);
        var retries = Channel.CreateUnbounded<RetryingEventArgs>();
        subscription.Retrying += (_, retry) => retries.Writer.TryWrite(retry);
        await using var reader = new EventReader(subscription);
        Assert.Equal("before", (await reader.NextAsync()).Text());
        _ = reader.PendingStep;

        // The quiet poll (the second) asks the server to hold it 30 s; the handler gives each attempt 10 s, and retries for 30 s in all.
        await clock.NextArmedAsync(due => due == AttemptTimeout);
        await clock.NextArmedAsync(due => due == AttemptTimeout);
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), TestSupport.Timeout, "the poll waits");
        clock.Advance(TotalTimeout);
        var cut = await retries.Reader.ReadAsync().AsTask().WaitAsync(TestSupport.Timeout);
        // The client's backoff before it polls again; Task.Delay keeps whole milliseconds, and arms no timer for less than one.
        if (cut.Delay >= TimeSpan.FromMilliseconds(1))
        {
            clock.Advance(await clock.NextArmedAsync(due => due <= cut.Delay && due >= cut.Delay - TimeSpan.FromMilliseconds(1)));
        }
        // Published while the next poll goes out or waits: either way it asks from the cursor, and gets it.
        await publisher.PublishAsync(topic, "after").WaitAsync(TestSupport.Timeout);

        Assert.Equal("after", (await reader.NextAsync()).Text());
        Assert.IsType<TimeoutRejectedException>(cut.Error);
        // A quarter of the 30 s the poll waited: under the handler's 10 s per attempt.
        Assert.Equal(TimeSpan.FromSeconds(7), client.PollTimeout);
        Assert.False(retries.Reader.TryRead(out var again), $"Retried again: {again?.Error}");
    }

    [Fact]
    public async Task AStreamOutlivesTheHandlersTimeoutsSinceItsRequestIsAnsweredAtOnce()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var clock = new WatchedClock();
        // The client on real time, so that moving the handler's clock tells only about the handler.
        await using var provider = Register(server, clock, LaharsubTransport.Auto, TimeProvider.System);
        var client = provider.GetRequiredService<LaharsubClient>();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(topic, 1)]);
        var connected = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var retried = 0;
        subscription.Connected += (_, _) => connected.TrySetResult();
        subscription.Retrying += (_, _) => Interlocked.Increment(ref retried);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;
        await connected.Task.WaitAsync(TestSupport.Timeout);

        // Ten minutes on the handler's clock: any timeout of its still running would fire.
        clock.Advance(TimeSpan.FromMinutes(10));
        await client.PublishAsync(topic, "still here").WaitAsync(TestSupport.Timeout);

        Assert.Equal("still here", (await reader.NextAsync()).Text());
        Assert.Equal(LaharsubTransport.WebSocket, subscription.Transport);
        Assert.Equal(0, Volatile.Read(ref retried));
    }

    [Fact]
    public async Task WithTheDocumentedConfigurationAQuietPollWaitsPastTheDefaultTimeoutsUncut()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        var clock = new WatchedClock();
        var services = new ServiceCollection();
        services.AddSingleton<TimeProvider>(clock);
        // What Aspire's service defaults do, then docs/dotnet-client.md's replacement on the Laharsub client.
        services.ConfigureHttpClientDefaults(http => http.AddStandardResilienceHandler());
        services.AddLaharsubClient(options =>
            {
                options.ApiAddress = server.ApiAddress;
                options.Transport = LaharsubTransport.LongPolling;
            })
            .RemoveAllResilienceHandlers()
            .AddStandardResilienceHandler(options =>
            {
                options.AttemptTimeout.Timeout = TimeSpan.FromSeconds(70);
                options.TotalRequestTimeout.Timeout = TimeSpan.FromMinutes(3);
                options.CircuitBreaker.SamplingDuration = TimeSpan.FromMinutes(2.5);
            });
        await using var provider = services.BuildServiceProvider();
        var client = provider.GetRequiredService<LaharsubClient>();
        var topic = await client.CreateTopicAsync().WaitAsync(TestSupport.Timeout);
        var subscription = client.Subscribe([new(topic, 1)]);
        var retried = 0;
        subscription.Retrying += (_, _) => Interlocked.Increment(ref retried);
        await using var reader = new EventReader(subscription);
        _ = reader.PendingStep;

        // The create, then the poll: each attempt now gets 70 s.
        await clock.NextArmedAsync(due => due == TimeSpan.FromSeconds(70));
        await clock.NextArmedAsync(due => due == TimeSpan.FromSeconds(70));
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == 1), TestSupport.Timeout, "the poll waits");
        // Past the default 10 s per attempt and 30 s in all, under the client's own 60 s (PollTimeout + RequestTimeout).
        clock.Advance(TimeSpan.FromSeconds(40));
        await client.PublishAsync(topic, "answered by the same poll").WaitAsync(TestSupport.Timeout);

        Assert.Equal("answered by the same poll", (await reader.NextAsync()).Text());
        Assert.Equal(0, Volatile.Read(ref retried));
        Assert.Equal(TimeSpan.FromSeconds(30), client.PollTimeout);
    }

    /// <summary>
    /// The client as an application with Aspire's service defaults registers it. The handler runs on
    /// <paramref name="clock"/>, and so does the client unless <paramref name="clientClock"/> is given.
    /// </summary>
    private static ServiceProvider Register(LaharsubTestServer server, TimeProvider clock, LaharsubTransport transport, TimeProvider? clientClock = null)
    {
        var services = new ServiceCollection();
        services.AddSingleton(clock);
        services.AddLaharsubClient(options =>
        {
            options.ApiAddress = server.ApiAddress;
            options.Transport = transport;
            options.RetryDelay = TimeSpan.FromMilliseconds(50);
            options.MaxRetryDelay = TimeSpan.FromMilliseconds(300);
            if (clientClock is not null)
            {
                options.TimeProvider = clientClock;
            }
        }).AddStandardResilienceHandler();
        return services.BuildServiceProvider();
    }
}
