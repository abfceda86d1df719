using System.Collections.Concurrent;
using System.Diagnostics;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Hosting;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;

namespace Laharsub.Server.Tests;

[Collection(nameof(ProcessWideListeners))]
public sealed class TracingTests
{
    [Fact]
    public async Task APublishAndThePollItWakesAreTracedWithTheSameTopicAndMessageId()
    {
        // The test's own trace reaches the server in traceparent (HttpClient propagates Activity.Current),
        // which keeps other tests' activities, from servers running alongside, out of this one's sight.
        using var recorder = new ActivityRecorder();
        using var root = new Activity("test").Start();
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        var poll = client.PollAsync($"topics={topic}&timeout=60");
        await PollTests.WaitForWaitersAsync(client, topic, 1);
        var messageId = await client.PublishTextAsync(topic, "traced");
        var response = await poll;

        Assert.Single(response.Messages);
        var publish = Assert.Single(recorder.InTrace(root.TraceId, "publish"));
        var answered = Assert.Single(await recorder.InTraceOnceStoppedAsync(root.TraceId, "poll"));
        Assert.Equal(ActivityKind.Producer, publish.Kind);
        Assert.Equal(ActivityKind.Consumer, answered.Kind);
        Assert.Equal((topic, messageId), (publish.GetTagItem("messaging.destination.name"), publish.GetTagItem("messaging.message.id")));
        Assert.Equal((topic, messageId), (answered.GetTagItem("messaging.destination.name"), answered.GetTagItem("messaging.message.id")));
        Assert.Equal(new[] { $"{topic}:{messageId}" }, answered.GetTagItem("laharsub.message.ids"));
        Assert.Equal("answered", answered.GetTagItem("laharsub.poll.outcome"));
    }

    [Fact]
    public async Task APollThatTimesOutIsTracedWithItsOutcomeAndNoMessages()
    {
        using var recorder = new ActivityRecorder();
        using var root = new Activity("test").Start();
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        await client.PollAsync($"topics={topic}&timeout=0");

        var poll = Assert.Single(await recorder.InTraceOnceStoppedAsync(root.TraceId, "poll"));
        Assert.Equal("timeout", poll.GetTagItem("laharsub.poll.outcome"));
        Assert.Null(poll.GetTagItem("laharsub.message.ids"));
        Assert.Equal(1, poll.GetTagItem("laharsub.poll.topics"));
    }

    /// <summary>Records Laharsub's activities, and ASP.NET Core's so that requests continue the caller's trace.</summary>
    private sealed class ActivityRecorder : IDisposable
    {
        private readonly ActivityListener _listener;
        private readonly ConcurrentQueue<Activity> _stopped = new();

        public ActivityRecorder()
        {
            _listener = new ActivityListener
            {
                ShouldListenTo = source => source.Name is LaharsubActivitySource.Name or "Microsoft.AspNetCore",
                Sample = (ref ActivityCreationOptions<ActivityContext> _) => ActivitySamplingResult.AllDataAndRecorded,
                ActivityStopped = _stopped.Enqueue,
            };
            ActivitySource.AddActivityListener(_listener);
        }

        /// <summary>
        /// The activities named <paramref name="name"/> in <paramref name="trace"/> once there is one: a poll's
        /// activity stops after its answer is written, which the client may read first (the server sends on
        /// the writing thread).
        /// </summary>
        public async Task<IEnumerable<Activity>> InTraceOnceStoppedAsync(ActivityTraceId trace, string name)
        {
            await Eventually.HoldsAsync(() => Task.FromResult(InTrace(trace, name).Any()), WireClient.Bound, $"no {name} activity stopped in the test's trace");
            return InTrace(trace, name);
        }

        public IEnumerable<Activity> InTrace(ActivityTraceId trace, string name) =>
            _stopped.Where(a => a.TraceId == trace && a.Source.Name == LaharsubActivitySource.Name && a.OperationName == name);

        public void Dispose() => _listener.Dispose();
    }
}
