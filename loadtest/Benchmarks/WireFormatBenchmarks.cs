using System.Text;
using BenchmarkDotNet.Attributes;
using Laharsub.Server.Delivery;
using Laharsub.Server.Endpoints;
using Laharsub.Server.Storage;
using Laharsub.Server.Transport;
using Laharsub.Server.Wire;
using Microsoft.AspNetCore.Http;

namespace Laharsub.Benchmarks;

/// <summary>
/// Encoding a published message into its wire forms, done once per message and server instance, on
/// its first delivery: the multipart part and the JSON element (text or base64 body).
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
    public int Encode()
    {
        var message = new Message(14, "0123456789abcdef", 42, DateTimeOffset.UnixEpoch, ContentType, _body);
        return WireFormat.JsonElement(message).Length + _wire.MultipartPart(message)!.Length;
    }
}

/// <summary>Writing a poll response of four already-encoded messages in each format (to a null stream).</summary>
[MemoryDiagnoser]
public class ResponseWritingBenchmarks
{
    private readonly WireFormat _wire = new();
    private PollResult _response = null!;
    private DefaultHttpContext _context = null!;

    [Params("json", "multipart")]
    public string Format { get; set; } = "";

    [Params(10, 1024)]
    public int BodyBytes { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        var body = Encoding.UTF8.GetBytes(new string('x', BodyBytes));
        var now = DateTimeOffset.UtcNow;
        _response = new PollResult([], Enumerable.Range(1, 4).Select(i => new Message(14, "0123456789abcdef", i, now, "application/octet-stream", body)).ToList(), unknownTopicId: null);
        // Encoded once, as the first answer of a real server does; the benchmark measures the writing.
        foreach (var message in _response.Messages)
        {
            WireFormat.JsonElement(message);
            _wire.MultipartPart(message);
        }
        _context = new DefaultHttpContext();
        _context.Response.Body = Stream.Null;
    }

    [Benchmark]
    public Task WriteFourMessages() => PollResponseWriter.WriteAsync(_context.Response, _response, Format == "json" ? PollFormat.Json : PollFormat.Multipart, _wire, CancellationToken.None);
}
