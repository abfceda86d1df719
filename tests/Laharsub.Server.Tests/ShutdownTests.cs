using System.Diagnostics;
using System.Net;
using System.Text;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Hosting;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Laharsub.Server.Tests;

/// <summary>
/// A server instance that is shutting down changes nothing: every state-changing request is answered 503
/// with Retry-After and Connection: close, so that the client makes the change again at an instance that
/// stays (the publish case is <see cref="PublishTests.AServerThatIsShuttingDownRefusesPublishesWith503SoThatNoneIsAcknowledgedAndLost"/>).
/// </summary>
[Collection(nameof(ProcessWideListeners))]
public sealed class ShutdownTests
{
    [Fact]
    public async Task AServerThatIsShuttingDownRefusesToCreateOrDeleteTopicsWith503ButStillAnswersReads()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        HttpResponseMessage create, delete;
        System.Text.Json.JsonElement info;
        await using (await HeldShutdown.BeginAsync(server))
        {
            create = await client.PostAsync("topics", null).WaitAsync(WireClient.Bound);
            delete = await client.DeleteAsync($"topics/{topic}").WaitAsync(WireClient.Bound);
            info = await client.GetTopicAsync(topic);
        }

        foreach (var refused in new[] { create, delete })
        {
            using (refused)
            {
                Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
                Assert.NotNull(refused.Headers.RetryAfter);
                Assert.True(refused.Headers.ConnectionClose, "the refused connection is closed, so that the next one reaches an instance that stays");
                Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
                Assert.Contains("shutting down", await refused.Content.ReadAsStringAsync());
            }
        }
        Assert.Equal(topic, info.GetProperty("topicId").GetInt64());
        Assert.NotNull(await server.Store.GetTopicAsync(topic));
        Assert.Equal(1, (await server.Store.GetStatisticsAsync()).TopicCount);
    }

    [Fact]
    public async Task APublishWhoseBodyArrivesAfterShutdownBeganIsRefusedWith503AndNotStored()
    {
        // The test's own trace reaches the server in traceparent, so that only this test's publish is seen starting.
        using var root = new Activity(nameof(APublishWhoseBodyArrivesAfterShutdownBeganIsRefusedWith503AndNotStored)).Start();
        var handlerStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var listener = new ActivityListener
        {
            ShouldListenTo = source => source.Name is LaharsubActivitySource.Name or "Microsoft.AspNetCore",
            Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
            ActivityStarted = activity =>
            {
                if (activity.TraceId == root.TraceId && activity.Source.Name == LaharsubActivitySource.Name && activity.OperationName == "publish")
                {
                    handlerStarted.TrySetResult();
                }
            },
        };
        ActivitySource.AddActivityListener(listener);
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var restOfBody = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        // The request passes the filter before shutdown begins; its body is still arriving when it does.
        var publish = client.PostAsync($"topics/{topic}", new SlowContent("first half, ", restOfBody.Task, "second half"));
        await handlerStarted.Task.WaitAsync(WireClient.Bound);
        HttpResponseMessage refused;
        await using (await HeldShutdown.BeginAsync(server))
        {
            restOfBody.SetResult();
            refused = await publish.WaitAsync(WireClient.Bound);
        }

        using (refused)
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
            Assert.NotNull(refused.Headers.RetryAfter);
            Assert.Contains("shutting down", await refused.Content.ReadAsStringAsync());
        }
        Assert.Equal(0, (await server.Store.GetTopicAsync(topic))!.LastMessageId);
    }

    /// <summary>
    /// Shutdown begun and held at its first step (polls answered, the server still serving), as a drain
    /// does; disposing lets it finish.
    /// </summary>
    private sealed class HeldShutdown : IAsyncDisposable
    {
        private readonly TaskCompletionSource _release = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private Task _stop = Task.CompletedTask;

        public static async Task<HeldShutdown> BeginAsync(LaharsubTestServer server)
        {
            var held = new HeldShutdown();
            var stopping = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            server.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping.Register(() =>
            {
                stopping.TrySetResult();
                held._release.Task.Wait(WireClient.Bound);
            });
            held._stop = Task.Run(server.StopAsync);
            await stopping.Task.WaitAsync(WireClient.Bound);
            return held;
        }

        public async ValueTask DisposeAsync()
        {
            _release.TrySetResult();
            await _stop.WaitAsync(WireClient.Bound);
        }
    }

    /// <summary>A chunked body sent in two parts, the second once <c>rest</c> completes.</summary>
    private sealed class SlowContent(string first, Task rest, string second) : HttpContent
    {
        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context)
        {
            await stream.WriteAsync(Encoding.UTF8.GetBytes(first));
            await stream.FlushAsync();
            await rest.WaitAsync(WireClient.Bound);
            await stream.WriteAsync(Encoding.UTF8.GetBytes(second));
        }

        protected override bool TryComputeLength(out long length)
        {
            length = 0;
            return false;
        }
    }
}
