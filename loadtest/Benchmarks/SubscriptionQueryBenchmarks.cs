using BenchmarkDotNet.Attributes;
using Laharsub.Server.Hosting;
using Laharsub.Server.Subscriptions;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.WebUtilities;

namespace Laharsub.Benchmarks;

/// <summary>Parsing and validating a poll's query of N subscriptions in each query form.</summary>
[MemoryDiagnoser]
public class SubscriptionQueryBenchmarks
{
    private readonly LaharsubOptions _options = new();
    private string _queryString = "";
    private QueryCollection _query = null!;

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
        _query = new QueryCollection(QueryHelpers.ParseQuery(_queryString));
    }

    /// <summary>The server's own parsing and validation of an already split query.</summary>
    [Benchmark]
    public object Parse() => SubscriptionQuery.Parse(_query, _options);

    /// <summary>Including ASP.NET Core's splitting of the raw query string, as a request pays it.</summary>
    [Benchmark]
    public object ParseFromQueryString() => SubscriptionQuery.Parse(new QueryCollection(QueryHelpers.ParseQuery(_queryString)), _options);
}
