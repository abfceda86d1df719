using BenchmarkDotNet.Attributes;
using Laharsub.Client.Wire;
using Laharsub.LoadTestClient.Load;
using Laharsub.Server.Delivery;
using Laharsub.Server.Endpoints;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Benchmarks;

/// <summary>
/// Whether the load generator could parse poll answers with the .NET client's readers instead of its own:
/// one answer of 1 or 20 ten-byte binary messages (the size of the generator's stamps), in each format, written by the
/// server's own <see cref="PollResponseWriter"/>. The generator's reader calls a sink per message over the
/// span it read off the socket; the client's builds a message object per item from a stream (the cheapest
/// way the generator could feed it is a <see cref="MemoryStream"/> over the same bytes).
/// </summary>
[MemoryDiagnoser]
public class PollAnswerParsingBenchmarks
{
    private byte[] _answer = [];
    private byte[] _boundary = [];
    private string _boundaryText = "";
    private byte[] _scratch = new byte[256];
    private readonly CountingSink _sink = new();

    [Params("json", "multipart")]
    public string Format { get; set; } = "";

    [Params(1, 20)]
    public int Messages { get; set; }

    [GlobalSetup]
    public async Task Setup()
    {
        var wire = new WireFormat();
        var body = new byte[10];
        Random.Shared.NextBytes(body);
        var now = DateTimeOffset.UtcNow;
        var result = new PollResult([], Enumerable.Range(1, Messages).Select(i => new Message(14, "0123456789abcdef", i, now, "application/octet-stream", body)).ToList(), unknownTopicId: null);
        var context = new DefaultHttpContext();
        using var written = new MemoryStream();
        context.Response.Body = written;
        await PollResponseWriter.WriteAsync(context.Response, result, Format == "json" ? Server.Wire.PollFormat.Json : Server.Wire.PollFormat.Multipart, wire, CancellationToken.None);
        await context.Response.BodyWriter.FlushAsync();
        _answer = written.ToArray();
        if (Format == "multipart")
        {
            _boundary = PollResponseReader.BoundaryOf(System.Text.Encoding.ASCII.GetBytes(context.Response.ContentType!)).ToArray();
            _boundaryText = System.Text.Encoding.ASCII.GetString(_boundary);
        }
        // Both readers must see every message, or the comparison is of different work.
        if (Generator() != Messages || await Client() != Messages)
        {
            throw new InvalidOperationException($"A reader did not find the {Messages} messages of the answer.");
        }
    }

    [Benchmark(Baseline = true)]
    public long Generator()
    {
        _sink.Count = 0;
        if (Format == "json")
        {
            PollResponseReader.ReadJson(_answer, _sink, ref _scratch);
        }
        else
        {
            PollResponseReader.ReadMultipart(_answer, _boundary, _sink);
        }
        return _sink.Count;
    }

    [Benchmark]
    public async Task<long> Client()
    {
        using IPollReader reader = Format == "json"
            ? new JsonPollReader(new MemoryStream(_answer, writable: false))
            : new MultipartPollReader(new MemoryStream(_answer, writable: false), _boundaryText);
        long count = 0;
        while (await reader.ReadAsync(CancellationToken.None) is { } item)
        {
            count += item is Client.LaharsubMessage ? 1 : 0;
        }
        return count;
    }

    private sealed class CountingSink : IPollResponseSink
    {
        public long Count;

        public void OnMessage(long topicId, long messageId, ReadOnlySpan<byte> body) => Count += body.Length == 10 ? 1 : 0;

        public void OnGap(long topicId, long fromMessageId, long toMessageId) { }

        public void OnReset(long topicId, long firstMessageId, bool epochChanged) { }

        public void OnTopicDeleted(long topicId) { }
    }
}
