using System.Buffers;
using System.IO.Pipelines;

namespace Laharsub.Server.FastPath;

/// <summary>
/// The connection's pipes as the stream a <see cref="System.Net.WebSockets.WebSocket"/> runs over, once the
/// fast path has answered the upgrade: each write goes to the connection and is flushed (the socket sends
/// each frame as it is written). Disposing it ends a pending read; the connection itself is the fast path's
/// to close, so that a close frame written last still reaches the client.
/// </summary>
internal sealed class ConnectionStream(PipeReader input, PipeWriter output) : Stream
{
    private volatile bool _disposed;

    public override bool CanRead => true;
    public override bool CanWrite => true;
    public override bool CanSeek => false;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        while (true)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            var read = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            var data = read.Buffer;
            if (!data.IsEmpty && !buffer.IsEmpty)
            {
                var count = (int)Math.Min(data.Length, buffer.Length);
                data.Slice(0, count).CopyTo(buffer.Span);
                input.AdvanceTo(data.GetPosition(count));
                return count;
            }
            input.AdvanceTo(data.Start, data.End);
            if (read.IsCompleted || read.IsCanceled || buffer.IsEmpty)
            {
                return 0;
            }
        }
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        var flushed = await output.WriteAsync(buffer, cancellationToken).ConfigureAwait(false);
        if (flushed.IsCompleted || flushed.IsCanceled)
        {
            throw new IOException("The connection was closed.");
        }
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task FlushAsync(CancellationToken cancellationToken) => output.FlushAsync(cancellationToken).AsTask();

    // A WebSocket reads and writes asynchronously only.
    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    public override void Flush() => throw new NotSupportedException();
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing && !_disposed)
        {
            _disposed = true;
            input.CancelPendingRead();
        }
        base.Dispose(disposing);
    }
}
