using System.Text;
using BenchmarkDotNet.Attributes;
using Laharsub.Server.Storage;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Benchmarks;

/// <summary>
/// Encoding a published message into its wire forms, done once per message under the topic's lock:
/// one call builds both the multipart part and the JSON element (text or base64 body).
/// </summary>
[MemoryDiagnoser]
public class EncodeBenchmarks
{
    private readonly WireFormat _wire = new();
    private byte[] _body = [];

    [Params("text/plain; charset=utf-8", "application/octet-stream")]
    public string ContentType { get; set; } = "";

    [Params(10, 1024)]
    public int BodyBytes { get; set; }

    [GlobalSetup]
    public void Setup() => _body = Encoding.UTF8.GetBytes(new string('x', BodyBytes));

    [Benchmark]
    public Message Encode() => _wire.Encode(14, 42, DateTimeOffset.UnixEpoch, ContentType, _body);
}

/// <summary>Writing a poll response of four already-encoded messages in each format (to a null stream).</summary>
[MemoryDiagnoser]
public class ResponseWritingBenchmarks
{
    private readonly WireFormat _wire = new();
    private PollResult _response = null!;
    private DefaultHttpContext _context = null!;

    [Params(PollFormat.Json, PollFormat.Multipart)]
    public PollFormat Format { get; set; }

    [Params(10, 1024)]
    public int BodyBytes { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var body = Encoding.UTF8.GetBytes(new string('x', BodyBytes));
        var now = DateTimeOffset.UtcNow;
        _response = new PollResult([], Enumerable.Range(1, 4).Select(i => _wire.Encode(14, i, now, "application/octet-stream", body)).ToList(), unknownTopicId: null);
        _context = new DefaultHttpContext();
        _context.Response.Body = Stream.Null;
    }

    [Benchmark]
    public Task WriteFourMessages() => PollResponseWriter.WriteAsync(_context.Response, _response, Format, _wire, CancellationToken.None);
}
