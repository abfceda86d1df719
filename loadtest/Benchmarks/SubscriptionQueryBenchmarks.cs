using Laharsub.Server.Transport;
using BenchmarkDotNet.Attributes;
using Laharsub.Server.Delivery;
using Laharsub.Server.Endpoints;
using Laharsub.Server.Hosting;
using Laharsub.Server.Storage.InMemory;
using Laharsub.Server;

namespace Laharsub.Benchmarks;

/// <summary>Parsing and validating a poll's query of N subscriptions in each query form.</summary>
[MemoryDiagnoser]
public class SubscriptionQueryBenchmarks
{
    private readonly LaharsubOptions _options = new();
    private readonly List<Subscription> _subscriptions = [];
    private string _queryString = "";

    [Params(1, 16, 256)]
    public int Topics { get; set; }

    [Params("compact", "indexed")]
    public string Form { get; set; } = "";

    [GlobalSetup]
    public void Setup()
    {
        var ids = Enumerable.Range(1, Topics).Select(i => (Topic: 1000 + i, From: 40 + i)).ToList();
        _queryString = "?timeout=30&" + (Form == "compact"
            ? "topics=" + string.Join(',', ids.Select(s => $"{s.Topic}:{s.From}"))
            : string.Join('&', ids.Select((s, i) => $"subs[{i}][topicid]={s.Topic}&subs[{i}][from]={s.From}")));
    }

    /// <summary>
    /// What a request pays: the raw query string split, decoded, parsed and validated into a list that
    /// is reused, as the poll endpoint reuses one per thread. (Builds before the poll read the raw string
    /// measured the same here through ASP.NET Core's QueryCollection.)
    /// </summary>
    [Benchmark]
    public int ParseFromQueryString() => SubscriptionQuery.Parse(_queryString, _options.Delivery, _subscriptions).Subscriptions.Count;
}
