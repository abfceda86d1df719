using BenchmarkDotNet.Attributes;
using Laharsub.Server.Delivery;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage;
using Laharsub.Server;

namespace Laharsub.Benchmarks;

/// <summary>
/// A poll over N topics that have messages for it, answered at once: the cost of gathering a response.
/// The first topic has 4 messages for the cursor, the others 1. With <see cref="Capped"/> the cap is
/// 2 messages per topic, so the first topic's fair share is cut short and the second round, which
/// hands it the room the others left, is part of the cost.
/// </summary>
[MemoryDiagnoser]
public class PollCollectBenchmarks
{
    private const int MessagesPerTopic = 4;
    private Backend _backend = null!;
    private Subscription[] _subscriptions = [];

    [Params(1, 16, 256)]
    public int Topics { get; set; }

    [Params(false, true)]
    public bool Capped { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _backend = BackendFactory.Create(options: new LaharsubOptions
        {
            MessageTimeToLive = TimeSpan.FromSeconds(15),
            MaxMessagesPerPoll = Capped ? Topics * 2 : 1_000_000,
        });
        var topics = BackendFactory.CreateTopics(_backend, Topics);
        foreach (var topic in topics)
        {
            for (var i = 0; i < MessagesPerTopic; i++)
            {
                _backend.PublishAsync(topic, BackendFactory.TenBytes, "text/plain").AsTask().GetAwaiter().GetResult();
            }
        }
        _subscriptions = topics.Select((id, i) => new Subscription(id, i == 0 ? 1 : MessagesPerTopic)).ToArray();
    }

    [Benchmark]
    public async ValueTask<int> CollectAtOnce() => (await _backend.PollAsync(_subscriptions, CancellationToken.None)).Messages.Count;
}
