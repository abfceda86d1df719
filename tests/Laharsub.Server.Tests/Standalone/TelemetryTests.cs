using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using System.Text;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace Laharsub.Server.Tests.Standalone;

/// <summary>OpenTelemetry of the standalone server process, switched on by configuration only.</summary>
public sealed class TelemetryTests
{
    [Fact]
    public async Task MetricsShowsTheLaharsubInstrumentsAfterAPublishAndAPoll()
    {
        await using var host = await HostProcess.StartAsync("Laharsub:Telemetry:Prometheus:Enabled=true", "Laharsub:Demo:Enabled=false");
        using var client = new HttpClient { BaseAddress = host.ApiAddress, Timeout = WireClient.Bound };
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "counted");
        var answer = await client.PollAsync($"topics={topic}:1");
        Assert.Single(answer.Messages);

        // The latency is recorded once the answer is written, and the exporter caches a scrape briefly.
        string metrics = "";
        await Eventually.HoldsAsync(async () =>
        {
            metrics = await client.GetStringAsync(new Uri(host.BaseAddress, "metrics"));
            return metrics.Contains("laharsub_delivery_latency_seconds_count{otel_scope_name=\"Laharsub.Server\"} 1", StringComparison.Ordinal);
        }, WireClient.Bound, "the scrape shows the delivery");

        Assert.Contains("laharsub_messages_published_total{otel_scope_name=\"Laharsub.Server\"} 1", metrics);
        Assert.Contains("laharsub_messages_delivered_total{otel_scope_name=\"Laharsub.Server\"} 1", metrics);
        Assert.Contains("laharsub_polls_total{otel_scope_name=\"Laharsub.Server\",laharsub_poll_outcome=\"answered\"} 1", metrics);
        Assert.Contains("laharsub_polls_active{otel_scope_name=\"Laharsub.Server\"} 0", metrics);
        Assert.Contains("laharsub_topics{otel_scope_name=\"Laharsub.Server\"} 1", metrics);
        Assert.Matches("laharsub_retained_bytes\\{otel_scope_name=\"Laharsub.Server\"\\} [1-9][0-9]*", metrics);
        Assert.Contains("laharsub_delivery_latency_seconds_bucket{otel_scope_name=\"Laharsub.Server\",le=\"0.0005\"}", metrics);
    }

    [Fact]
    public async Task MetricsIsNotServedUnlessEnabled()
    {
        await using var host = await HostProcess.StartAsync("Laharsub:Demo:Enabled=false");
        using var client = new HttpClient { Timeout = WireClient.Bound };

        using var response = await client.GetAsync(new Uri(host.BaseAddress, "metrics"));

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
    }

    [Fact]
    public async Task TheLaharsubOtlpEndpointSettingSendsMetricsAndTracesToTheCollector()
    {
        await using var collector = await FakeCollector.StartAsync();
        await using var host = await HostProcess.StartAsync(
            $"Laharsub:Telemetry:Otlp:Endpoint={collector.Address}", "Laharsub:Telemetry:Otlp:Protocol=HttpProtobuf",
            "OTEL_METRIC_EXPORT_INTERVAL=200", "OTEL_BSP_SCHEDULE_DELAY=100", "Laharsub:Demo:Enabled=false");
        using var client = new HttpClient { BaseAddress = host.ApiAddress, Timeout = WireClient.Bound };
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "exported");
        await client.PollAsync($"topics={topic}:1");

        // OTLP is protobuf; names and string values appear in it as plain UTF-8.
        await Eventually.HoldsAsync(() => Task.FromResult(
                collector.Received("/v1/metrics", "laharsub.delivery.latency") && collector.Received("/v1/traces", "laharsub.message.ids")),
            TimeSpan.FromSeconds(30), "the collector received Laharsub's metrics and the poll's trace");
        Assert.True(collector.Received("/v1/traces", "messaging.operation.name"), "the publish is traced");
        Assert.True(collector.Received("/v1/metrics", "laharsub"), "the service is named laharsub");
    }

    /// <summary>
    /// Two server processes on one Redis export to an OTLP/HTTP receiver: a poll answered on one links to
    /// the span of the publish made on the other, and the servers' logs arrive with their formatted text.
    /// </summary>
    [Fact]
    public async Task WithOtlpOnAPollLinksToThePublishOnAnotherInstanceAndLogsAreExported()
    {
        await using var collector = await FakeCollector.StartAsync();
        var redis = await SharedRedis.GetAsync();
        string[] settings =
        [
            $"Laharsub:Telemetry:Otlp:Endpoint={collector.Address}", "Laharsub:Telemetry:Otlp:Protocol=HttpProtobuf",
            "OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_BLRP_SCHEDULE_DELAY=100", "Laharsub:Demo:Enabled=false",
            $"Laharsub:Redis:Configuration={redis.Configuration}", $"Laharsub:Redis:KeyPrefix={SharedRedis.UniquePrefix()}",
        ];
        await using var publisher = await HostProcess.StartAsync(settings);
        await using var poller = await HostProcess.StartAsync(settings);
        using var atPublisher = new HttpClient { BaseAddress = publisher.ApiAddress, Timeout = WireClient.Bound };
        using var atPoller = new HttpClient { BaseAddress = poller.ApiAddress, Timeout = WireClient.Bound };
        var topic = await atPublisher.CreateTopicAsync();
        // Each request starts a trace of the test's choosing, so the receiver's spans can be told apart.
        var publishTrace = ActivityTraceId.CreateRandom();
        var pollTrace = ActivityTraceId.CreateRandom();

        var poll = atPoller.SendAsync(Traced(new HttpRequestMessage(HttpMethod.Get, $"subscriptions?topics={topic}&timeout=60"), pollTrace));
        await Eventually.HoldsAsync(async () => (await atPoller.GetTopicAsync(topic)).GetProperty("waitingPolls").GetInt32() == 1,
            WireClient.Bound, "the poll waits on the other instance");
        using var published = await atPublisher.SendAsync(Traced(new HttpRequestMessage(HttpMethod.Post, $"topics/{topic}")
        {
            Content = new StringContent("linked", Encoding.UTF8, "text/plain"),
        }, publishTrace));
        Assert.Equal(HttpStatusCode.Created, published.StatusCode);
        using var answer = await poll.WaitAsync(WireClient.Bound);
        Assert.Equal(HttpStatusCode.OK, answer.StatusCode);

        OtlpSpan? publish = null, polled = null;
        await Eventually.HoldsAsync(() =>
        {
            var spans = collector.Spans();
            publish = spans.FirstOrDefault(span => span.Name == "publish" && span.TraceId.AsSpan().SequenceEqual(Bytes(publishTrace)));
            polled = spans.FirstOrDefault(span => span.Name == "poll" && span.TraceId.AsSpan().SequenceEqual(Bytes(pollTrace)));
            return Task.FromResult(publish is not null && polled is not null && collector.Received("/v1/logs", $"Topic {topic} created."));
        }, TimeSpan.FromSeconds(30), "the receiver got the publish and poll spans and the topic's creation log");
        var link = Assert.Single(polled!.Links);
        Assert.Equal(Bytes(publishTrace), link.TraceId);
        Assert.Equal(publish!.SpanId, link.SpanId);
    }

    [Fact]
    public async Task AnOtlpEndpointThatIsNotAnHttpUrlStopsTheServerAtStartNamingTheSetting()
    {
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() =>
            HostProcess.StartAsync("Laharsub:Telemetry:Otlp:Endpoint=collector:4317", "Laharsub:Demo:Enabled=false"));

        Assert.Contains("Laharsub:Telemetry:Otlp:Endpoint must be an absolute http:// or https:// URL", error.Message);
    }

    private static HttpRequestMessage Traced(HttpRequestMessage request, ActivityTraceId trace)
    {
        request.Headers.Add("traceparent", $"00-{trace.ToHexString()}-{ActivitySpanId.CreateRandom().ToHexString()}-01");
        return request;
    }

    private static byte[] Bytes(ActivityTraceId trace) => Convert.FromHexString(trace.ToHexString());

    /// <summary>An OTLP/HTTP receiver on loopback that keeps what it was sent, by path.</summary>
    private sealed class FakeCollector : IAsyncDisposable
    {
        private readonly WebApplication _app;
        private readonly ConcurrentQueue<(string Path, byte[] Body)> _requests = new();

        private FakeCollector()
        {
            var builder = WebApplication.CreateSlimBuilder();
            builder.WebHost.UseUrls("http://127.0.0.1:0");
            builder.Logging.ClearProviders();
            _app = builder.Build();
            _app.MapPost("/v1/{signal}", async (HttpContext context) =>
            {
                using var body = new MemoryStream();
                await context.Request.Body.CopyToAsync(body);
                _requests.Enqueue((context.Request.Path, body.ToArray()));
                context.Response.ContentType = "application/x-protobuf";
            });
        }

        public Uri Address => new(_app.Urls.First());

        public static async Task<FakeCollector> StartAsync()
        {
            var collector = new FakeCollector();
            await collector._app.StartAsync().WaitAsync(WireClient.Bound);
            return collector;
        }

        public bool Received(string path, string text) =>
            _requests.Any(r => r.Path == path && Encoding.UTF8.GetString(r.Body).Contains(text, StringComparison.Ordinal));

        /// <summary>Every span received so far.</summary>
        public List<OtlpSpan> Spans() => [.. _requests.Where(r => r.Path == "/v1/traces").SelectMany(r => OtlpSpan.Parse(r.Body))];

        public async ValueTask DisposeAsync()
        {
            await _app.StopAsync().WaitAsync(WireClient.Bound);
            await _app.DisposeAsync();
        }
    }
}
