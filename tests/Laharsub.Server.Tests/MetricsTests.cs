using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Hosting;
using Laharsub.Server.Tests.Support;
using Laharsub.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Time.Testing;

namespace Laharsub.Server.Tests;

public sealed class MetricsTests
{
    [Fact]
    public async Task PublishesDeliveriesPollsTopicsAndRetainedBytesAreMeasured()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var recorder = new MetricRecorder(server.Services.GetRequiredService<IMeterFactory>());
        using var client = server.CreateClient();
        var first = await client.CreateTopicAsync();
        var second = await client.CreateTopicAsync();
        await client.PublishTextAsync(first, "hello");
        await client.PublishTextAsync(second, "world!");

        var answered = await client.PollAsync($"topics={first}:1,{second}:1");
        var empty = await client.PollAsync($"topics={first}:2&timeout=0");

        Assert.Equal(2, answered.Messages.Count);
        Assert.Empty(empty.Messages);
        Assert.Equal(2, recorder.Sum("laharsub.messages.published"));
        Assert.Equal(2, recorder.Sum("laharsub.messages.delivered"));
        Assert.Equal(1, recorder.Sum("laharsub.polls", ("laharsub.poll.outcome", "answered")));
        Assert.Equal(1, recorder.Sum("laharsub.polls", ("laharsub.poll.outcome", "timeout")));
        Assert.Equal(0, recorder.Sum("laharsub.polls.active"));
        Assert.Equal(2, recorder.Observe("laharsub.topics"));
        // What the store counts against MaxRetainedBytes: the gauge reports the store's own figure.
        Assert.Equal((await server.Store.GetStatisticsAsync()).RetainedBytes, recorder.Observe("laharsub.retained.bytes"));
        Assert.True(recorder.Observe("laharsub.retained.bytes") >= 11, "at least the 11 body bytes are counted");
    }

    [Fact]
    public async Task AWaitingPollIsActiveUntilItIsAnswered()
    {
        await using var server = await LaharsubTestServer.StartAsync();
        using var recorder = new MetricRecorder(server.Services.GetRequiredService<IMeterFactory>());
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();

        var poll = client.PollAsync($"topics={topic}&timeout=60");
        await Eventually.HoldsAsync(() => Task.FromResult(recorder.Sum("laharsub.polls.active") == 1), WireClient.Bound, "the poll is active");
        await client.PublishTextAsync(topic, "wake up");
        await poll;

        // The poll is counted as ended before its answer is written, so by now it is.
        Assert.Equal(0, recorder.Sum("laharsub.polls.active"));
        Assert.Equal(1, recorder.Sum("laharsub.polls", ("laharsub.poll.outcome", "answered")));
    }

    [Fact]
    public async Task EachDeliveredMessageRecordsTheTimeFromItsPublishToTheWrittenAnswer()
    {
        var clock = new FakeTimeProvider();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<TimeProvider>(clock));
        using var recorder = new MetricRecorder(server.Services.GetRequiredService<IMeterFactory>());
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        await client.PublishTextAsync(topic, "older");
        clock.Advance(TimeSpan.FromSeconds(2));
        await client.PublishTextAsync(topic, "newer");
        clock.Advance(TimeSpan.FromMilliseconds(250));

        var answered = await client.PollAsync($"topics={topic}:1", "multipart/mixed");
        var empty = await client.PollAsync($"topics={topic}:3&timeout=0");

        Assert.Equal(2, answered.Messages.Count);
        Assert.Empty(empty.Messages);
        // Recorded once the answer is written, which the client may see a moment before.
        await Eventually.HoldsAsync(() => Task.FromResult(recorder.Values("laharsub.delivery.latency").Count == 2), WireClient.Bound, "both deliveries are recorded");
        Assert.Equal([2.25, 0.25], recorder.Values("laharsub.delivery.latency"));
    }

    [Fact]
    public async Task APollRefusedByItsClientsCapIsCountedBySettingAndLogged()
    {
        var logs = new LogRecorder();
        await using var server = await LaharsubTestServer.StartAsync(services: s => s.AddSingleton<ILoggerProvider>(logs),
            settings: new Dictionary<string, string?> { ["Laharsub:Limits:MaxWaitingPollsPerClient"] = "1" });
        using var recorder = new MetricRecorder(server.Services.GetRequiredService<IMeterFactory>());
        using var client = server.CreateClient();
        var topic = await client.CreateTopicAsync();
        var waiting = client.PollAsync($"topics={topic}&timeout=60");
        await Eventually.HoldsAsync(() => Task.FromResult(recorder.Sum("laharsub.polls.active") == 1), WireClient.Bound, "the first poll waits");

        var refused = await client.PollAsync($"topics={topic}&timeout=60");

        Assert.Equal(System.Net.HttpStatusCode.TooManyRequests, refused.Status);
        Assert.Equal(1, recorder.Sum("laharsub.client_limit.refused", ("laharsub.limit.setting", "Laharsub:Limits:MaxWaitingPollsPerClient")));
        Assert.Contains(logs.Entries, entry => entry.Level == LogLevel.Warning
            && entry.Message.StartsWith("Laharsub:Limits:MaxWaitingPollsPerClient (1) refused 1 requests or connections", StringComparison.Ordinal));
        await client.PublishTextAsync(topic, "ends the first poll");
        await waiting.WaitAsync(WireClient.Bound);
    }

    /// <summary>Listens to the Laharsub meter of one server (other tests' servers run alongside, each with its own factory).</summary>
    private sealed class MetricRecorder : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly ConcurrentQueue<(string Instrument, long Value, KeyValuePair<string, object?>[] Tags)> _measurements = new();
        private readonly ConcurrentQueue<(string Instrument, double Value)> _doubles = new();

        public MetricRecorder(IMeterFactory scope)
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == LaharsubMetrics.MeterName && instrument.Meter.Scope == scope)
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => _measurements.Enqueue((instrument.Name, value, tags.ToArray())));
            _listener.SetMeasurementEventCallback<int>((instrument, value, tags, _) => _measurements.Enqueue((instrument.Name, value, tags.ToArray())));
            _listener.SetMeasurementEventCallback<double>((instrument, value, _, _) => _doubles.Enqueue((instrument.Name, value)));
            _listener.Start();
        }

        public long Sum(string instrument, (string Key, string Value)? tag = null) => _measurements
            .Where(m => m.Instrument == instrument && (tag is not { } t || m.Tags.Any(p => p.Key == t.Key && Equals(p.Value, t.Value))))
            .Sum(m => m.Value);

        public List<double> Values(string instrument) => _doubles.Where(m => m.Instrument == instrument).Select(m => m.Value).ToList();

        /// <summary>Reads an observable gauge now.</summary>
        public long Observe(string instrument)
        {
            var before = _measurements.Count;
            _listener.RecordObservableInstruments();
            return _measurements.Skip(before).Last(m => m.Instrument == instrument).Value;
        }

        public void Dispose() => _listener.Dispose();
    }
}
