using BenchmarkDotNet.Attributes;
using Laharsub.Server.Delivery;
using Laharsub.Server.Storage;

namespace Laharsub.Benchmarks;

/// <summary>
/// Publishing a 10-byte message to a topic on which N polls wait: the publish appends and signals
/// the topic, waking every waiter (the first answer encodes the message, on the woken poll's thread) (each woken poll's continuation is queued to the thread
/// pool; its own work runs on other threads and is not part of this time). The polls are registered
/// again before every publish, hence one publish per iteration.
/// </summary>
[MemoryDiagnoser]
[InvocationCount(1)]
public class PublishBenchmarks
{
    private Backend _backend = null!;
    private long _topicId;
    private Task[] _polls = [];

    [Params(0, 1, 100, 10_000)]
    public int WaitingPolls { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _backend = BackendFactory.Create();
        _topicId = BackendFactory.CreateTopics(_backend, 1)[0];
        _polls = new Task[WaitingPolls];
    }

    [IterationSetup]
    public void RegisterPolls()
    {
        Subscription[] subscriptions = [new(_topicId, BackendFactory.NextId(_backend, _topicId))];
        for (var i = 0; i < _polls.Length; i++)
        {
            _polls[i] = _backend.PollAsync(subscriptions, CancellationToken.None).AsTask();
        }
    }

    [Benchmark]
    public PublishResult Publish() =>
        _backend.PublishAsync(_topicId, BackendFactory.TenBytes, "application/octet-stream").AsTask().GetAwaiter().GetResult();

    [IterationCleanup]
    public void CompletePolls() => Task.WaitAll(_polls, TimeSpan.FromSeconds(30));
}
