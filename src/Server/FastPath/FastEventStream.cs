using Laharsub.Server.Transport;
using System.Buffers;
using System.Buffers.Text;
using System.IO.Pipelines;
using Microsoft.AspNetCore.Connections;

namespace Laharsub.Server.FastPath;

/// <summary>
/// A Server-Sent Events stream on the fast path: the events go to the connection as the pipeline's response
/// would carry them, a chunk per send (HTTP/1.1 chunked framing) after the same head, and the stream's end
/// is the last chunk.
/// </summary>
internal sealed class FastEventStream(PipeWriter output, FastPathResponses responses, ConnectionContext connection, string traceId, byte[] cors) : IEventStreamTarget
{
    /// <summary>A buffer grown past this by a large message is let go after its send, so that a quiet stream keeps little.</summary>
    private const int KeptBufferBytes = 16 * 1024;

    private ArrayBufferWriter<byte> _events = new(512);

    /// <summary>Whether the head was sent (then the answer is a 200 whose end is the last chunk).</summary>
    public bool Started { get; private set; }

    /// <summary>The answer's status, for hosting's metrics.</summary>
    public int Status { get; private set; } = 200;

    public IBufferWriter<byte> Events => _events;

    public CancellationToken ClientGone => connection.ConnectionClosed;

    public async ValueTask<bool> SendAsync()
    {
        if (!Started)
        {
            responses.WriteEventStreamHead(output, cors);
            Started = true;
        }
        WriteChunk();
        var flushed = await output.FlushAsync().ConfigureAwait(false);
        return !flushed.IsCompleted && !flushed.IsCanceled && !connection.ConnectionClosed.IsCancellationRequested;
    }

    public async Task RefuseAsync(Delivery.PollResult refused, int maxMembers)
    {
        Status = refused.UnknownTopicId is null ? 409 : 404;
        responses.WriteRefused(output, cors, refused, maxMembers, traceId: null, eventStream: true);
        await output.FlushAsync().ConfigureAwait(false);
    }

    /// <summary>Answers 503 when the store could not be read before anything was sent; false when the stream had begun.</summary>
    public bool TryRefuse(string title, string detail, string storeName, int retryAfterSeconds)
    {
        if (Started)
        {
            return false;
        }
        Status = 503;
        responses.WritePollProblem(output, cors, 503, title, detail, traceId, json => json.WriteString("store", storeName), retryAfterSeconds, eventStream: true);
        return true;
    }

    public void Abort() => connection.Abort(new ConnectionAbortedException("The stream's client did not read within Streams:MaxWriteWait."));

    /// <summary>Ends a begun stream with the last chunk (the connection then closes).</summary>
    public async ValueTask EndAsync()
    {
        if (Started && !connection.ConnectionClosed.IsCancellationRequested)
        {
            WriteChunk();
            output.Write("0\r\n\r\n"u8);
            await output.FlushAsync().ConfigureAwait(false);
        }
    }

    private void WriteChunk()
    {
        var length = _events.WrittenCount;
        if (length == 0)
        {
            return;
        }
        var span = output.GetSpan(18);
        Utf8Formatter.TryFormat(length, span, out var written, new StandardFormat('x'));
        span[written++] = (byte)'\r';
        span[written++] = (byte)'\n';
        output.Advance(written);
        output.Write(_events.WrittenSpan);
        output.Write("\r\n"u8);
        if (_events.Capacity > KeptBufferBytes)
        {
            _events = new ArrayBufferWriter<byte>(512);
        }
        else
        {
            _events.ResetWrittenCount();
        }
    }
}
