using System.Diagnostics;
using System.Text;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.FastPath;
using Laharsub.Server.Host.Composition;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using OpenTelemetry;
using OpenTelemetry.Trace;

namespace Laharsub.Server.Tests;

/// <summary>
/// Traced requests on the fast path, recorded by OpenTelemetry's SDK as a deployment records them: the same spans
/// as the pipeline's (hosting's HTTP server span continuing the request's trace context, Laharsub's spans under it
/// with their links), sampled once, and nothing recorded for a request sampled out.
/// </summary>
public sealed partial class FastPathTests
{
    private const string TracedHost = "traced.test";

    /// <summary>
    /// An event stream, a WebSocket, a waiting poll and a publish with <c>traceparent</c> (the poll also with
    /// <c>tracestate</c> and <c>baggage</c>), then a publish, a socket's publish frame and a poll without: the
    /// spans of the fast path equal the pipeline's in names, kinds, parents, tags, links, trace state and baggage,
    /// among them hosting's OpenTelemetry tags (the HTTP semantic conventions' <c>url.path</c>,
    /// <c>http.request.method</c>, <c>server.address</c>...: this project sets <c>Microsoft.AspNetCore.Hosting.SuppressActivityOpenTelemetryData</c>
    /// to false, as the standalone server does, since .NET 10's hosting leaves them off otherwise).
    /// </summary>
    [Fact]
    public async Task TheFastPathRecordsTheSpansThePipelineRecords()
    {
        var fast = await TracedSpansAsync(fastPath: true);
        var pipeline = await TracedSpansAsync(fastPath: false);

        Assert.Equal(pipeline.Count, fast.Count);
        for (var i = 0; i < fast.Count; i++)
        {
            Assert.Equal(pipeline[i], fast[i]);
        }
        // Not a comparison of nothing: the server spans have hosting's tags, and continue the caller's trace.
        Assert.Contains(fast, span => span.StartsWith("poll | Microsoft.AspNetCore ", StringComparison.Ordinal)
            && span.Contains("parent remote b7ad6b7169203332 (remote) | tracestate vendor=value | baggage tenant=ann,plan=free", StringComparison.Ordinal)
            && span.Contains($"http.request.method=GET server.address={TracedHost}", StringComparison.Ordinal)
            && span.Contains("url.path=/ps/subscriptions url.scheme=http user_agent.original=tracing-test/1.0", StringComparison.Ordinal));
        Assert.Contains(fast, span => span.StartsWith("poll | Laharsub.Server poll", StringComparison.Ordinal)
            && span.Contains("parent poll/Microsoft.AspNetCore.Hosting.HttpRequestIn/", StringComparison.Ordinal)
            && span.Contains("links publish/publish/1", StringComparison.Ordinal));
    }

    /// <summary>
    /// With a sampler that records nothing (a 1 % sampler's usual answer), the fast path serves the requests, asks the
    /// sampler once for each (for hosting's span; Laharsub's follow their parent's decision) and records nothing.
    /// </summary>
    [Fact]
    public async Task ARequestSampledOutIsSampledOnceOnTheFastPathAndRecordsNothing()
    {
        await using var server = await StartFastAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var sampler = new DroppingSampler();
        var exported = new ExportedSpans();
        using var tracing = Sdk.CreateTracerProviderBuilder()
            .AddSource(LaharsubActivitySource.Name, "Microsoft.AspNetCore")
            .SetSampler(new ParentBasedSampler(sampler))
            .AddInMemoryExporter(exported)
            .Build();
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        Assert.Equal(201, (await ExchangeAsync(connection, WithTrace(Post($"/ps/topics/{topic}", "text/plain", "one"), ""), timeout.Token)).Status);
        Assert.Equal(200, (await ExchangeAsync(connection, WithTrace(Get($"/ps/subscriptions?topics={topic}:1"), ""), timeout.Token)).Status);
        // A caller's trace that it did not sample: the parent's decision, the root sampler is not asked.
        Assert.Equal(200, (await ExchangeAsync(connection,
            WithTrace(Get($"/ps/subscriptions?topics={topic}:1"), "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00\r\n"), timeout.Token)).Status);

        Assert.Equal([HostingTelemetry.ActivityName, HostingTelemetry.ActivityName], sampler.Asked);
        Assert.Empty(exported.Snapshot());
        Assert.Equal(2, requests.Count("poll"));
        Assert.Equal(1, requests.Count("publish"));
        Assert.Equal(0, requests.Count("pipeline") + requests.Count("handed_over"));
        // The publish kept no trace context with its message: nothing recorded it.
        var stored = new List<Laharsub.Server.Storage.Message>();
        await server.Store.ReadAsync(new Laharsub.Server.Storage.TopicReadRequest[] { new(topic, 1, 10, 1 << 20) }, new Laharsub.Server.Storage.TopicReadResult[1], stored);
        Assert.False(Assert.Single(stored).IsTraced);
    }

    /// <summary>
    /// While hosting's diagnostic listener has a subscriber (OpenTelemetry's ASP.NET Core instrumentation, whose
    /// filters and enrichment read the <c>HttpContext</c>), requests are the pipeline's, counted with that reason: a
    /// connection opened meanwhile is Kestrel's whole, one opened before hands over each request.
    /// </summary>
    [Fact]
    public async Task WhileHostingsDiagnosticListenerIsSubscribedThePipelineAnswers()
    {
        await using var server = await StartFastAsync();
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        using var requests = new FastPathRequestCounter(server.Services);
        var events = new System.Collections.Concurrent.ConcurrentQueue<string>();
        using var timeout = new CancellationTokenSource(Bound);
        using var before = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        Assert.Equal(204, (await ExchangeAsync(before, Get($"/ps/subscriptions?topics={topic}&timeout=0"), timeout.Token)).Status);
        using (var hosting = new HostingEvents(events))
        using (DiagnosticListener.AllListeners.Subscribe(hosting))
        {
            using var connection = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

            Assert.Equal(201, (await ExchangeAsync(connection, Post($"/ps/topics/{topic}", "text/plain", "listened"), timeout.Token)).Status);
            Assert.Equal(200, (await ExchangeAsync(connection, Get($"/ps/subscriptions?topics={topic}:1"), timeout.Token)).Status);
            Assert.Equal(200, (await ExchangeAsync(before, Get($"/ps/subscriptions?topics={topic}:1"), timeout.Token)).Status);
        }

        Assert.Contains("Microsoft.AspNetCore.Hosting.HttpRequestIn.Start", events);
        // The poll on the connection opened before, answered by the fast path before the subscription.
        Assert.Equal(1, requests.Count("poll"));
        Assert.Equal(0, requests.Count("publish"));
        Assert.Equal(1, requests.Count("handed_over", "diagnostic_listener"));
        Assert.Equal(1, requests.Count("pipeline", "diagnostic_listener"));
    }

    /// <summary>The spans recorded for the scenario of <see cref="TheFastPathRecordsTheSpansThePipelineRecords"/>, each described without what varies between runs, sorted.</summary>
    private static async Task<List<string>> TracedSpansAsync(bool fastPath)
    {
        Activity.Current = null;
        await using var server = await LaharsubTestServer.StartAsync(settings: new Dictionary<string, string?> { [StandaloneHost.FastPathSetting] = fastPath ? "true" : "false" });
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        // Recorded from here on: every span exported is the scenario's (its collection runs alone).
        var exported = new ExportedSpans();
        using var tracing = Sdk.CreateTracerProviderBuilder()
            .AddSource(LaharsubActivitySource.Name, "Microsoft.AspNetCore")
            .SetSampler(new AlwaysOnSampler())
            .AddInMemoryExporter(exported)
            .Build();
        using var requests = new FastPathRequestCounter(server.Services);
        using var timeout = new CancellationTokenSource(Bound);
        var traces = new Dictionary<string, string>
        {
            ["sse"] = "0af7651916cd43dd8448eb211c800001",
            ["websocket"] = "0af7651916cd43dd8448eb211c800002",
            ["poll"] = "0af7651916cd43dd8448eb211c800003",
            ["publish"] = "0af7651916cd43dd8448eb211c800004",
        };
        string Parent(string name) => $"traceparent: 00-{traces[name]}-b7ad6b716920333{traces.Keys.ToList().IndexOf(name)}-01\r\n";

        using var stream = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        await stream.SendAsync(WithTrace(Get($"/ps/subscriptions?topics={topic}", "text/event-stream"), Parent("sse")), timeout.Token);
        await stream.ReadThroughAsync("event: subscribed", timeout.Token);
        using var socket = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        await socket.SendAsync(WithTrace($"GET /ps/subscriptions?topics={topic} HTTP/1.1\r\nHost: test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: laharsub.v1\r\n\r\n", Parent("websocket")), timeout.Token);
        await socket.ReadThroughAsync("\"type\":\"subscribed\"", timeout.Token);
        // The stream and the socket wait on the topic too.
        var waiting = server.WaitingPolls(topic);
        Assert.Equal(2, waiting);
        using var polling = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);
        await polling.SendAsync(WithTrace(Get($"/ps/subscriptions?topics={topic}&timeout=60"), Parent("poll") + "tracestate: vendor=value\r\nbaggage: tenant=ann,plan=free\r\n"), timeout.Token);
        await Eventually.HoldsAsync(() => Task.FromResult(server.WaitingPolls(topic) == waiting + 1), Bound, "the poll never waited");
        using var publishing = await RawConnection.OpenAsync(server.BaseAddress, timeout.Token);

        Assert.Equal(201, (await ExchangeAsync(publishing, WithTrace(Post($"/ps/topics/{topic}", "text/plain", "one"), Parent("publish")), timeout.Token)).Status);
        Assert.Equal(200, (await polling.ReadAnswerAsync(timeout.Token))?.Status);
        await DeliveredAsync("one");
        Assert.Equal(201, (await ExchangeAsync(publishing, WithTrace(Post($"/ps/topics/{topic}", "text/plain", "two"), ""), timeout.Token)).Status);
        await DeliveredAsync("two");
        await socket.SendAsync(MaskedFrame(0x1, Encoding.UTF8.GetBytes($"{{\"type\":\"publish\",\"id\":\"p\",\"topicId\":{topic},\"body\":\"three\"}}")), timeout.Token);
        await DeliveredAsync("three");
        Assert.Equal(200, (await ExchangeAsync(polling, WithTrace(Get($"/ps/subscriptions?topics={topic}:1"), ""), timeout.Token)).Status);
        // The stream's and the socket's server spans end with them.
        stream.Dispose();
        await socket.SendAsync(MaskedFrame(0x8, [0x03, 0xE8]), timeout.Token);
        // Its close frame comes first: only the connection's end is awaited.
        _ = await socket.ClosedByServerAsync(timeout.Token);

        // Six server spans (stream, socket, two polls, two publishes); three publishes, two polls and six deliveries of Laharsub's.
        List<Activity> spans = [];
        try
        {
            await Eventually.HoldsAsync(() =>
            {
                spans = exported.Snapshot();
                return Task.FromResult(spans.Count == 17);
            }, Bound, "the 17 spans exported");
        }
        catch (TimeoutException)
        {
            throw new Xunit.Sdk.XunitException($"{spans.Count} of the 17 spans exported; all: {string.Join("; ", exported.Snapshot().Select(span =>
                $"{span.TraceId} {span.DisplayName} {span.GetTagItem("server.address")}"))}");
        }
        if (fastPath)
        {
            Assert.Equal((1, 1, 2, 2, 0L), (requests.Count("stream"), requests.Count("websocket"), requests.Count("poll"), requests.Count("publish"),
                requests.Count("pipeline") + requests.Count("handed_over")));
        }
        var labels = traces.ToDictionary(trace => trace.Value, trace => trace.Key);
        foreach (var root in spans.Where(span => span.ParentSpanId == default))
        {
            labels[root.TraceId.ToHexString()] = "without traceparent: "
                + string.Join(",", spans.Where(span => span.TraceId == root.TraceId && span != root).Select(span => span.OperationName).Distinct().Order());
        }
        return [.. spans.Select(span => Describe(span, spans, labels)).Order(StringComparer.Ordinal)];

        async Task DeliveredAsync(string body)
        {
            await stream.ReadThroughAsync($"\"body\":\"{body}\"", timeout.Token);
            await socket.ReadThroughAsync($"\"body\":\"{body}\"", timeout.Token);
        }
    }

    /// <summary>A span as text: its trace by the request that made it, its parent and links by name, its tags less those that vary (a port, an epoch).</summary>
    private static string Describe(Activity span, List<Activity> spans, Dictionary<string, string> labels)
    {
        string Named(ActivitySpanId id) => spans.FirstOrDefault(other => other.SpanId == id) is { } found
            ? $"{labels[found.TraceId.ToHexString()]}/{found.OperationName}/{found.GetTagItem("messaging.message.id")}"
            : id == default ? "none" : $"remote {id.ToHexString()}";
        var tags = span.TagObjects
            .Select(tag => tag.Key is "server.port" or "laharsub.epoch" ? $"{tag.Key}=<varies>" : $"{tag.Key}={Text(tag.Value)}")
            .Order(StringComparer.Ordinal);
        return $"{labels[span.TraceId.ToHexString()]} | {span.Source.Name} {span.OperationName} '{span.DisplayName}' {span.Kind} {span.Status}"
            + $" | parent {Named(span.ParentSpanId)}{(span.HasRemoteParent ? " (remote)" : "")} | tracestate {span.TraceStateString}"
            + $" | baggage {string.Join(",", span.Baggage.Select(item => $"{item.Key}={item.Value}"))}"
            + $" | links {string.Join(",", span.Links.Select(link => Named(link.Context.SpanId)))} | {string.Join(" ", tags)}";
    }

    private static string? Text(object? value) => value is string[] values ? string.Join(",", values) : Convert.ToString(value, System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>A request to <see cref="TracedHost"/> from a named user agent, with <paramref name="headers"/> (trace context) added.</summary>
    private static string WithTrace(string request, string headers) =>
        request.Replace("Host: test\r\n", $"Host: {TracedHost}\r\nUser-Agent: tracing-test/1.0\r\n{headers}", StringComparison.Ordinal);

    /// <summary>The SDK's in-memory exporter's collection, safe to read while the server exports into it.</summary>
    private sealed class ExportedSpans : ICollection<Activity>
    {
        private readonly List<Activity> _spans = [];

        public List<Activity> Snapshot()
        {
            lock (_spans)
            {
                return [.. _spans];
            }
        }

        public void Add(Activity item)
        {
            lock (_spans)
            {
                _spans.Add(item);
            }
        }

        public void Clear()
        {
            lock (_spans)
            {
                _spans.Clear();
            }
        }

        public int Count => Snapshot().Count;
        public bool IsReadOnly => false;
        public bool Contains(Activity item) => Snapshot().Contains(item);
        public void CopyTo(Activity[] array, int arrayIndex) => Snapshot().CopyTo(array, arrayIndex);
        public bool Remove(Activity item) => throw new NotSupportedException();
        public IEnumerator<Activity> GetEnumerator() => Snapshot().GetEnumerator();
        System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();
    }

    /// <summary>A root sampler that records nothing and remembers what it was asked to sample.</summary>
    private sealed class DroppingSampler : Sampler
    {
        private readonly System.Collections.Concurrent.ConcurrentQueue<string> _asked = new();

        public List<string> Asked => [.. _asked];

        public override SamplingResult ShouldSample(in SamplingParameters parameters)
        {
            _asked.Enqueue(parameters.Name);
            return new SamplingResult(SamplingDecision.Drop);
        }
    }

    /// <summary>Subscribes to hosting's diagnostic listener (<c>Microsoft.AspNetCore</c>), as OpenTelemetry's ASP.NET Core instrumentation does, and notes its events.</summary>
    private sealed class HostingEvents(System.Collections.Concurrent.ConcurrentQueue<string> events)
        : IObserver<DiagnosticListener>, IObserver<KeyValuePair<string, object?>>, IDisposable
    {
        private readonly System.Collections.Concurrent.ConcurrentQueue<IDisposable> _subscriptions = new();

        public void OnNext(DiagnosticListener listener)
        {
            if (listener.Name == "Microsoft.AspNetCore")
            {
                _subscriptions.Enqueue(listener.Subscribe(this));
            }
        }

        public void Dispose()
        {
            while (_subscriptions.TryDequeue(out var subscription))
            {
                subscription.Dispose();
            }
        }

        public void OnNext(KeyValuePair<string, object?> value) => events.Enqueue(value.Key);

        public void OnCompleted()
        {
        }

        public void OnError(Exception error)
        {
        }
    }
}
