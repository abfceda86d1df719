using System.Collections.Concurrent;
using System.Diagnostics;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Hosting;
using Laharsub.Server.Redis;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;

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

        var (topic, messageId, publish, answered) = await PollWokenByAPublishAsync(recorder, root, pollAt: client, publishAt: client);

        AssertLinksTo(answered, publish);
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

    [Fact]
    public async Task APollLinksToAtMostMaxLinksPublishesAndListsThemAll()
    {
        using var recorder = new ActivityRecorder();
        using var root = new Activity("test").Start();
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var count = LaharsubActivitySource.MaxLinks + 3;
        for (var i = 0; i < count; i++)
        {
            await client.PublishTextAsync(topic, $"m{i}");
        }

        Assert.Equal(count, (await client.PollAsync($"topics={topic}:1")).Messages.Count);

        var poll = Assert.Single(await recorder.InTraceOnceStoppedAsync(root.TraceId, "poll"));
        // A publish's activity stops once its answer is written, which the client may read first.
        await Eventually.HoldsAsync(() => Task.FromResult(recorder.InTrace(root.TraceId, "publish").Count() == count), WireClient.Bound, "every publish stopped");
        var publishes = recorder.InTrace(root.TraceId, "publish").Select(p => p.SpanId).ToHashSet();
        Assert.Equal(count, publishes.Count);
        Assert.Equal(LaharsubActivitySource.MaxLinks, poll.Links.Count());
        Assert.All(poll.Links, link => Assert.Contains(link.Context.SpanId, publishes));
        Assert.Equal(count, poll.GetTagItem("messaging.batch.message_count"));
    }

    [Fact]
    public async Task AnEventStreamsDeliverySpanLinksToThePublishSpan()
    {
        using var recorder = new ActivityRecorder();
        using var root = new Activity("test").Start();
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        await using var stream = await EventStreamReader.OpenAsync(client, $"topics={topic}");
        await stream.ReadEventAsync("subscribed");
        await client.PublishTextAsync(topic, "streamed");
        await stream.ReadEventAsync("message");

        var publish = Assert.Single(await recorder.InTraceOnceStoppedAsync(root.TraceId, "publish"));
        var delivery = await recorder.LinkingToAsync(publish);
        Assert.Equal("sse", delivery.GetTagItem("laharsub.transport"));
        Assert.Equal(ActivityKind.Consumer, delivery.Kind);
        Assert.Equal(new[] { $"{topic}:1" }, delivery.GetTagItem("laharsub.message.ids"));
    }

    [Fact]
    public async Task AWebSocketsDeliverySpanLinksToThePublishSpanAlsoForAPublishFrame()
    {
        using var recorder = new ActivityRecorder();
        using var root = new Activity("test").Start();
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        await using var socket = await LaharsubSocket.ConnectAsync(server.ApiAddress, $"topics={topic}");
        await socket.ReceiveAsync("subscribed");
        await client.PublishTextAsync(topic, "over http");
        await socket.ReceiveAsync("message");
        await socket.SendAsync($$"""{"type":"publish","id":"p","topicId":{{topic}},"body":"over the socket"}""");
        // Its answer and its delivery come in either order.
        var frames = new[] { await socket.ReceiveAsync(), await socket.ReceiveAsync() };
        Assert.Contains(frames, frame => frame.GetProperty("type").GetString() == "message");

        await Eventually.HoldsAsync(() => Task.FromResult(recorder.InTrace(root.TraceId, "publish").Count() == 2), WireClient.Bound, "both publishes stopped");
        var publishes = recorder.InTrace(root.TraceId, "publish").ToList();
        var overHttp = Assert.Single(publishes, p => Equals(p.GetTagItem("messaging.message.id"), 1L));
        var overSocket = Assert.Single(publishes, p => Equals(p.GetTagItem("messaging.message.id"), 2L));
        Assert.Equal("websocket", (await recorder.LinkingToAsync(overHttp)).GetTagItem("laharsub.transport"));
        Assert.Equal("websocket", (await recorder.LinkingToAsync(overSocket)).GetTagItem("laharsub.transport"));
    }

    [Fact]
    public async Task APublishThroughRedisLinksThePollOnAnotherInstance()
    {
        using var recorder = new ActivityRecorder();
        using var root = new Activity("test").Start();
        var redis = await SharedRedis.GetAsync();
        var prefix = SharedRedis.UniquePrefix();
        void OnRedis(IServiceCollection services) => services.AddLaharsub().AddRedis(o => { o.Configuration = redis.Configuration; o.KeyPrefix = prefix; });
        await using var a = await LaharsubTestServer.StartAsync(services: OnRedis);
        await using var b = await LaharsubTestServer.StartAsync(services: OnRedis);
        using var atA = a.CreateClient();
        using var atB = b.CreateClient();

        var (_, _, publish, answered) = await PollWokenByAPublishAsync(recorder, root, pollAt: atB, publishAt: atA);

        AssertLinksTo(answered, publish);
        Assert.True(Assert.Single(answered.Links).Context.IsRemote, "the context came from Redis");
    }

    [Fact]
    public async Task AMessagePublishedUntracedCarriesNoContextAndItsPollHasNoLink()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        Activity.Current = null;
        // In process, with no current activity: nothing to keep.
        await server.Store.PublishAsync(topic, "untraced"u8.ToArray(), "text/plain");
        var statistics = await server.Store.GetStatisticsAsync();

        using var recorder = new ActivityRecorder();
        using var root = new Activity("test").Start();
        Assert.Single((await client.PollAsync($"topics={topic}:1")).Messages);

        var poll = Assert.Single(await recorder.InTraceOnceStoppedAsync(root.TraceId, "poll"));
        Assert.Empty(poll.Links);
        var messages = new List<Laharsub.Server.Storage.Message>();
        await server.Store.ReadAsync(new Laharsub.Server.Storage.TopicReadRequest[] { new(topic, 1, 10, 1 << 20) }, new Laharsub.Server.Storage.TopicReadResult[1], messages);
        Assert.Equal(default, Assert.Single(messages).TraceContext);
        Assert.Equal(Laharsub.Server.Storage.RetainedCost.Of(messages[0]), statistics.RetainedBytes);
        Assert.False(messages[0].IsTraced);
    }

    [Fact]
    public async Task ATracedMessageCountsItsTraceContextInTheRetainedBytes()
    {
        using var recorder = new ActivityRecorder();
        using var root = new Activity("test").Start();
        await using var server = await LaharsubTestServer.StartAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        await client.PublishTextAsync(topic, "traced!!");

        var messages = new List<Laharsub.Server.Storage.Message>();
        await server.Store.ReadAsync(new Laharsub.Server.Storage.TopicReadRequest[] { new(topic, 1, 10, 1 << 20) }, new Laharsub.Server.Storage.TopicReadResult[1], messages);
        var message = Assert.Single(messages);
        Assert.True(message.IsTraced);
        Assert.Equal(Laharsub.Server.Storage.RetainedCost.Of(message), (await server.Store.GetStatisticsAsync()).RetainedBytes);
        Assert.Equal(Laharsub.Server.Storage.RetainedCost.TraceContextBytes,
            Laharsub.Server.Storage.RetainedCost.Of(message) - Laharsub.Server.Storage.RetainedCost.Of(8, 8, message.ContentType.Length, message.Epoch.Length));
    }

    /// <summary>
    /// A topic created at <paramref name="publishAt"/>, a poll that waits on it at <paramref name="pollAt"/>
    /// and a publish that wakes it, all in <paramref name="root"/>'s trace; returns the publish's and the poll's activities.
    /// </summary>
    private static async Task<(long Topic, long MessageId, Activity Publish, Activity Poll)> PollWokenByAPublishAsync(
        ActivityRecorder recorder, Activity root, HttpClient pollAt, HttpClient publishAt)
    {
        var topic = await publishAt.CreateTopicAsync();
        var poll = pollAt.PollAsync($"topics={topic}&timeout=60");
        await PollTests.WaitForWaitersAsync(pollAt, topic, 1);
        var messageId = await publishAt.PublishTextAsync(topic, "traced");
        Assert.Single((await poll.WaitAsync(WireClient.Bound)).Messages);
        var publish = Assert.Single(await recorder.InTraceOnceStoppedAsync(root.TraceId, "publish"));
        var answered = Assert.Single(await recorder.InTraceOnceStoppedAsync(root.TraceId, "poll"));
        return (topic, messageId, publish, answered);
    }

    private static void AssertLinksTo(Activity activity, Activity publish)
    {
        var link = Assert.Single(activity.Links);
        Assert.Equal((publish.TraceId, publish.SpanId), (link.Context.TraceId, link.Context.SpanId));
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

        /// <summary>The first stopped Laharsub activity that links to <paramref name="publish"/>, once there is one.</summary>
        public async Task<Activity> LinkingToAsync(Activity publish)
        {
            bool Links(Activity a) => a.Links.Any(link => link.Context.SpanId == publish.SpanId && link.Context.TraceId == publish.TraceId);
            await Eventually.HoldsAsync(() => Task.FromResult(Laharsubs.Any(Links)), WireClient.Bound, $"no activity linking to publish {publish.SpanId} stopped");
            return Laharsubs.First(Links);
        }

        private IEnumerable<Activity> Laharsubs => _stopped.Where(a => a.Source.Name == LaharsubActivitySource.Name);

        public IEnumerable<Activity> InTrace(ActivityTraceId trace, string name) =>
            _stopped.Where(a => a.TraceId == trace && a.Source.Name == LaharsubActivitySource.Name && a.OperationName == name);

        public void Dispose() => _listener.Dispose();
    }
}
