using System.Diagnostics.Metrics;
using BenchmarkDotNet.Attributes;
using Laharsub.Server.Delivery;
using Laharsub.Server.Diagnostics;
using Laharsub.Server.Endpoints;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace Laharsub.Benchmarks;

/// <summary>
/// What the delivery latency histogram adds to writing a poll answer of four encoded messages: the
/// writer alone, the answer as the endpoint returns it (writer + histogram) with nobody listening, and
/// the same with a listener on the Laharsub meter (as an exporter would be).
/// </summary>
[MemoryDiagnoser]
public class DeliveryLatencyBenchmarks
{
    private readonly WireFormat _wire = new();
    private readonly List<IDisposable> _disposables = [];
    private PollResult _result = null!;
    private DefaultHttpContext _context = null!;
    private LaharsubMetrics _unlistened = null!;
    private LaharsubMetrics _listened = null!;
    private double _recorded;

    [GlobalSetup]
    public void Setup()
    {
        var backend = BackendFactory.Create();
        var now = DateTimeOffset.UtcNow;
        _result = new PollResult([], Enumerable.Range(1, 4).Select(i => new Message(14, "0123456789abcdef", i, now, "application/octet-stream", BackendFactory.TenBytes)).ToList(), unknownTopicId: null);
        foreach (var message in _result.Messages)
        {
            WireFormat.JsonElement(message);
        }
        _context = new DefaultHttpContext();
        _context.Response.Body = Stream.Null;
        _unlistened = Metrics(backend.Store);

        var listenedFactory = MeterFactory();
        _listened = new LaharsubMetrics(listenedFactory, backend.Store, TimeProvider.System);
        var listener = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Scope == listenedFactory && instrument.Name == "laharsub.delivery.latency")
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<double>((_, value, _, _) => _recorded += value);
        listener.Start();
        _disposables.Add(listener);
    }

    [GlobalCleanup]
    public void Cleanup() => _disposables.ForEach(d => d.Dispose());

    [Benchmark(Baseline = true)]
    public Task WriterOnly() => PollResponseWriter.WriteAsync(_context.Response, _result, PollFormat.Json, _wire, CancellationToken.None);

    [Benchmark]
    public Task AnswerNobodyListening() => AnswerAsync(_unlistened);

    [Benchmark]
    public Task AnswerListened() => AnswerAsync(_listened);

    /// <summary>What a poll's answer costs: written, then its delivery latencies recorded (as LongPollSink does).</summary>
    private async Task AnswerAsync(LaharsubMetrics metrics)
    {
        await PollResponseWriter.WriteAsync(_context.Response, _result, PollFormat.Json, _wire, CancellationToken.None);
        metrics.AnswerWritten(_result.Messages);
    }

    private LaharsubMetrics Metrics(ILaharsubStore store) => new(MeterFactory(), store, TimeProvider.System);

    private IMeterFactory MeterFactory()
    {
        var services = new ServiceCollection().AddMetrics().BuildServiceProvider();
        _disposables.Add(services);
        return services.GetRequiredService<IMeterFactory>();
    }
}
